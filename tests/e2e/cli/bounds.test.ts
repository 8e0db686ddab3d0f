/**
 * Every CLI command is bounded, and its network failures say what to do. The timeouts are tested on the real
 * executable (bin/dynamodb-outbox.js, spawned as a child process) against a server that accepts connections and
 * never answers: `--timeout` must end the whole command, start-up included. The error classifications are tested
 * against real refused ports, an unresolvable host, a server that is not AWS, and a credential chain with nothing
 * to find.
 */
import * as assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { DescribeTableCommand, DynamoDBClient, ScanCommand } from "@aws-sdk/client-dynamodb";
import { Checklist } from "../../../cli/shared/checklist";
import { createDynamoDbClient } from "../../../cli/shared/client";
import { bindToDeadline, CLEANUP_GRACE_MS, requestBounds, startDeadline } from "../../../cli/shared/deadline";
import { DOCTOR_PACKAGES, type DoctorAws } from "../../../cli/doctor/aws";
import { explainFailure } from "../../../cli/shared/failure";
import { createOutput, errorText } from "../../../cli/shared/io";
import { main } from "../../../cli/main";
import { checkLive } from "../../../cli/verify/expiry";
import { LOCAL_REGION } from "../../../dev/emulators/dynamodb-local";
import { OutboxError } from "../../../runtime/errors";
import { OutboxStore } from "../../../runtime/store";
import { dynamoClient, dynamoEndpoint } from "../../support/dynamodb";
import { captureIo, createOutboxTable, dropTable, fastClock, LOCAL_ENV } from "../../support/cli";

const BIN = path.join(__dirname, "..", "..", "..", "bin", "dynamodb-outbox.js");

/** A TCP server that accepts every connection and never writes a byte. */
async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
    const sockets = new Set<Socket>();
    const server: Server = createServer((socket) => {
        sockets.add(socket);
        socket.on("error", () => undefined);
        socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return {
        url: `http://127.0.0.1:${port}`,
        close: async () => {
            for (const s of sockets) s.destroy();
            await new Promise<void>((resolve) => server.close(() => resolve()));
        },
    };
}

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
}

interface Spawned {
    readonly code: number | null;
    readonly signal: NodeJS.Signals | null;
    readonly stdout: string;
    readonly stderr: string;
    readonly elapsedMs: number;
}

/**
 * Run the executable as a user would, with only the given environment and an empty HOME (no ~/.aws). A guard
 * kills it after `killAfterMs`, so a broken bound fails the test instead of hanging it; the child is killed in any
 * case before this returns. `stdin`, when given, gets the child's standard input (a pipe) to write or hold open.
 */
async function spawnCli(
    args: string[],
    env: Record<string, string>,
    killAfterMs = 30_000,
    stdin?: (input: NodeJS.WritableStream) => void,
): Promise<Spawned> {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "dynamodb-outbox-bounds-"));
    const started = Date.now();
    const child = spawn(process.execPath, [BIN, ...args], {
        env: { PATH: process.env.PATH ?? "", HOME: home, ...env },
        stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    if (stdin !== undefined && child.stdin !== null) {
        child.stdin.on("error", () => undefined);
        stdin(child.stdin);
    }
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
    let guard: NodeJS.Timeout | undefined;
    try {
        return await new Promise<Spawned>((resolve, reject) => {
            guard = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
            child.on("error", reject);
            child.on("close", (code, signal) =>
                resolve({ code, signal, stdout, stderr, elapsedMs: Date.now() - started }),
            );
        });
    } finally {
        clearTimeout(guard);
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
        fs.rmSync(home, { recursive: true, force: true });
    }
}

/** Credentials and region for a spawned CLI, nothing else from this process. */
const KEYS = { ...LOCAL_ENV };

/** The bound: `--timeout 5` must have exited within 10 s of the launch. */
const ACCEPTANCE_MS = 10_000;

describe("cli: every command is bounded by --timeout (the real executable, a server that never answers)", function () {
    this.timeout(60_000);
    let silent: { url: string; close(): Promise<void> };
    before(async () => {
        silent = await silentServer();
    });
    after(async () => {
        await silent?.close();
    });

    for (const command of ["verify", "doctor"]) {
        it(`${command} --timeout 5 exits 1 within 10 s, naming the timeout and the call that never answered`, async () => {
            const run = await spawnCli(
                [command, "--table", "orders-outbox", "--endpoint", silent.url, "--timeout", "5"],
                KEYS,
            );
            assert.equal(
                run.signal,
                null,
                `killed by the test's guard after ${run.elapsedMs} ms: the bound did not hold\n${run.stderr}`,
            );
            assert.equal(run.code, 1, run.stderr);
            assert.match(
                run.stderr,
                new RegExp(
                    `^dynamodb-outbox ${command}: timed out: --timeout 5\\.0 s ran out \\(it bounds the whole ${command} command\\) while waiting for DynamoDB DescribeTable at ${silent.url.replace(/\./g, "\\.")}; check that the endpoint answers, or raise --timeout\\n$`,
                    "m",
                ),
            );
            assert.ok(run.elapsedMs < ACCEPTANCE_MS, `exited after ${run.elapsedMs} ms`);
        });
    }

    it("migrate --timeout 3 exits 1 the same way", async () => {
        const run = await spawnCli(
            ["migrate", "--table", "orders-outbox", "--endpoint", silent.url, "--timeout", "3"],
            KEYS,
        );
        assert.equal(run.signal, null, `killed by the test's guard: ${run.stderr}`);
        assert.equal(run.code, 1, run.stderr);
        assert.match(
            run.stderr,
            /^dynamodb-outbox migrate: timed out: --timeout 3\.0 s ran out \(it bounds the whole migrate command\) while waiting for DynamoDB DescribeTable at /m,
        );
        assert.ok(run.elapsedMs < ACCEPTANCE_MS, `exited after ${run.elapsedMs} ms`);
    });

    it("redrive --timeout 3 exits 1 the same way, and --json prints the failure as one object", async () => {
        const run = await spawnCli(
            [
                "redrive",
                "--table",
                "orders-outbox",
                "--dlq-url",
                `${silent.url}/000000000000/orders-dlq`,
                "--sqs-endpoint",
                silent.url,
                "--endpoint",
                silent.url,
                "--timeout",
                "3",
                "--json",
            ],
            KEYS,
        );
        assert.equal(run.signal, null, `killed by the test's guard: ${run.stderr}`);
        assert.equal(run.code, 1, run.stderr);
        assert.match(
            run.stderr,
            /^redrive failed: timed out: --timeout 3\.0 s ran out \(it bounds the whole redrive command\) while waiting for SQS ReceiveMessage at http:\/\/127\.0\.0\.1:\d+; /m,
        );
        const json = JSON.parse(run.stdout) as { command: string; ok: boolean; error: string };
        assert.deepEqual([json.command, json.ok], ["redrive", false]);
        assert.match(json.error, /^timed out: --timeout 3\.0 s ran out/);
        assert.ok(run.elapsedMs < ACCEPTANCE_MS, `exited after ${run.elapsedMs} ms`);
    });

    it("a request that gets no answer fails on its own request timeout, before --timeout, with throwOnRequestTimeout", async () => {
        const deadline = startDeadline("verify", 60_000);
        const client = bindToDeadline(
            new DynamoDBClient({
                region: LOCAL_REGION,
                endpoint: silent.url,
                credentials: { accessKeyId: "local", secretAccessKey: "local" },
                ...requestBounds(1_500),
                maxAttempts: 1,
            }),
            deadline,
            { service: "DynamoDB", endpoint: silent.url, settings: "--endpoint and --region" },
        );
        try {
            const err = await client.send(new DescribeTableCommand({ TableName: "orders-outbox" })).then(
                () => assert.fail("a server that never answers answered"),
                (e: unknown) => e,
            );
            assert.equal(deadline.expired(), false);
            assert.equal(
                errorText(err),
                `DynamoDB at ${silent.url} did not answer DescribeTable within the request timeout of 1.5 s, 1 attempt(s) (each request's own bound; --timeout bounds the whole command): check --endpoint and --region, and that the endpoint answers`,
            );
        } finally {
            client.destroy();
            deadline.dispose();
        }
    });

    it("bounds each request by the smaller of its own bounds and --timeout, and makes a request timeout throw", () => {
        assert.deepEqual(requestBounds(60_000), {
            maxAttempts: 5,
            requestHandler: { connectionTimeout: 5_000, requestTimeout: 30_000, throwOnRequestTimeout: true },
        });
        assert.deepEqual(requestBounds(2_000).requestHandler, {
            connectionTimeout: 2_000,
            requestTimeout: 2_000,
            throwOnRequestTimeout: true,
        });
    });
});

describe("cli: a command that ignores the deadline is abandoned", function () {
    this.timeout(60_000);
    let table: string;
    before(async () => {
        table = await createOutboxTable({}, "cli-abandon");
    });
    after(async () => {
        await dropTable(table);
    });

    it(`doctor whose Lambda check never returns (a port that ignores the signal) ends ${CLEANUP_GRACE_MS} ms after --timeout with exit 1, and writes nothing after`, async () => {
        // Injected: a Lambda port that never answers and takes no signal, as no real client would; the table is
        // DynamoDB Local's.
        const aws: DoctorAws = {
            lambda: { port: { listEventSourceMappings: () => new Promise<never>(() => undefined) } },
            eventBridge: { missing: DOCTOR_PACKAGES.eventBridge },
            cloudWatch: { missing: DOCTOR_PACKAGES.cloudWatch },
            sns: { missing: DOCTOR_PACKAGES.sns },
            destroy: () => undefined,
        };
        const io = { ...captureIo({ ...LOCAL_ENV }), doctorAws: () => aws };
        const code = await main(
            ["doctor", "--table", table, "--endpoint", await dynamoEndpoint(), "--timeout", "1", "--json"],
            io,
        );
        assert.equal(code, 1);
        const lines = io
            .errors()
            .split("\n")
            .filter((l) => l !== "");
        assert.deepEqual(lines, [
            "dynamodb-outbox doctor: timed out: --timeout 1.0 s ran out (it bounds the whole doctor command); check that the endpoint answers, or raise --timeout",
        ]);
        assert.deepEqual(JSON.parse(io.output()), {
            command: "doctor",
            table,
            ok: false,
            error: lines[0]?.slice("dynamodb-outbox doctor: ".length),
        });
    });
});

describe("cli: verify still removes its verification record when --timeout runs out mid-way", function () {
    this.timeout(60_000);
    let table: string;
    before(async () => {
        table = await createOutboxTable({}, "cli-bounds");
    });
    after(async () => {
        await dropTable(table);
    });

    it("the expiry wait is cut by the deadline; the cleanup runs on its grace and passes", async () => {
        // Injected: an expiry sweep that never moves the record but reads the table each time (ExpiryIndex lag on
        // AWS), so the wait lasts until the deadline cuts the read. The rest is DynamoDB Local.
        const deadline = startDeadline("verify", 4_000);
        const endpoint = await dynamoEndpoint();
        const client = createDynamoDbClient({ region: LOCAL_REGION, endpoint }, LOCAL_ENV, deadline);
        const cleanupClient = createDynamoDbClient(
            { region: LOCAL_REGION, endpoint },
            LOCAL_ENV,
            deadline,
            deadline.cleanupSignal,
        );
        const clock = fastClock();
        const real = new OutboxStore({ client, tableName: table, clock });
        const lagging = {
            preflight: () => real.preflight(),
            persist: real.persist.bind(real),
            countPending: real.countPending.bind(real),
            expire: async () => {
                await client.send(new DescribeTableCommand({ TableName: table }));
                return 0;
            },
        };
        const io = captureIo({}, clock);
        const out = createOutput(io, false);
        const checks = new Checklist(out);
        try {
            await checkLive(checks, {
                store: lagging,
                client,
                cleanupClient,
                deadline,
                tableName: table,
                region: LOCAL_REGION,
                expiryMs: 1_000,
                timeoutMs: 3_600_000,
                pollIntervalMs: 200,
                out,
            });
        } finally {
            client.destroy();
            cleanupClient.destroy();
            deadline.dispose();
        }
        assert.deepEqual(
            checks.results.map((r) => `${r.id}:${r.status}`),
            ["preflight:pass", "expiry:fail", "depth:skip", "cleanup:pass"],
            io.output(),
        );
        assert.match(
            checks.results[1]?.detail ?? "",
            /^timed out: --timeout 4\.0 s ran out \(it bounds the whole verify command\)/,
        );
        const ddb = await dynamoClient();
        assert.deepEqual(
            (await ddb.send(new ScanCommand({ TableName: table }))).Items,
            [],
            "the verification record and fence row were left behind",
        );
    });
});

describe("cli: network and credential failures say what to do", function () {
    this.timeout(60_000);

    it("a refused port names the endpoint and ECONNREFUSED, not an UNAVAILABLE or UnknownError", async () => {
        const url = `http://127.0.0.1:${await closedPort()}`;
        const io = captureIo({ ...LOCAL_ENV });
        assert.equal(await main(["verify", "--table", "orders-outbox", "--endpoint", url, "--timeout", "20"], io), 1);
        assert.equal(
            io.errors(),
            `dynamodb-outbox verify: describe table "orders-outbox" failed: cannot reach DynamoDB at ${url}: ECONNREFUSED, the connection was refused: nothing listens on that host and port (connect ECONNREFUSED ${url.slice("http://".length)}): check --endpoint and --region, and that the host and port are reachable from here\n`,
        );
    });

    it("an unresolvable host names the endpoint and ENOTFOUND", async () => {
        const io = captureIo({ ...LOCAL_ENV });
        assert.equal(
            await main(
                [
                    "doctor",
                    "--table",
                    "orders-outbox",
                    "--endpoint",
                    "http://does-not-exist.invalid",
                    "--timeout",
                    "20",
                    "--json",
                ],
                io,
            ),
            1,
        );
        const expected =
            /^describe table "orders-outbox" failed: cannot reach DynamoDB at http:\/\/does-not-exist\.invalid: (ENOTFOUND, the host name does not resolve|EAI_AGAIN, the host name could not be resolved: DNS did not answer) \(getaddrinfo \w+ does-not-exist\.invalid\): check --endpoint and --region/;
        assert.match(io.errors(), new RegExp(`^dynamodb-outbox doctor: ${expected.source.slice(1)}`));
        const json = JSON.parse(io.output()) as { command: string; ok: boolean; error: string };
        assert.deepEqual([json.command, json.ok], ["doctor", false]);
        assert.match(json.error, expected);
    });

    for (const [what, body] of [
        ["an HTML page", "<html><body>Not Found</body></html>"],
        ["an empty body", ""],
    ] as const) {
        it(`a server that is not DynamoDB (an HTTP 404 with ${what}) is named with its status, not as UnknownError or a JSON parse error`, async () => {
            const server: HttpServer = createHttpServer((_req, res) => {
                res.writeHead(404, { "content-type": "text/html" });
                res.end(body);
            });
            await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
            const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
            try {
                const io = captureIo({ ...LOCAL_ENV });
                assert.equal(
                    await main(["verify", "--table", "orders-outbox", "--endpoint", url, "--timeout", "20"], io),
                    1,
                );
                assert.equal(
                    io.errors(),
                    `dynamodb-outbox verify: describe table "orders-outbox" failed: DynamoDB at ${url} answered HTTP 404 with something that is not a DynamoDB response: check that --endpoint and --region point at DynamoDB (another server, or a proxy, answered)\n`,
                );
            } finally {
                await new Promise<void>((resolve) => server.close(() => resolve()));
            }
        });
    }

    it("every network error code reads with its meaning (Node's errors, made here: unreachable hosts cannot be staged)", () => {
        const meanings: [string, RegExp][] = [
            ["EAI_AGAIN", /the host name could not be resolved: DNS did not answer/],
            ["EHOSTUNREACH", /the host is unreachable from here/],
            ["ENETUNREACH", /the network is unreachable from here/],
            ["ETIMEDOUT", /the connection timed out/],
            ["ECONNRESET", /the connection was reset/],
            ["EPIPE", /the connection was closed while the request was sent/],
        ];
        for (const [code, meaning] of meanings) {
            const err = new OutboxError("CONNECTION_LOST", `describe table "t" failed`, {
                cause: Object.assign(new Error(`connect ${code} 10.0.0.7:8000`), { code }),
            });
            const text = explainFailure(err) ?? "";
            assert.match(
                text,
                new RegExp(
                    `^describe table "t" failed: cannot reach the AWS endpoint: ${code}, ${meaning.source} \\(connect ${code} 10\\.0\\.0\\.7:8000\\): check the endpoint and region`,
                ),
                code,
            );
        }
        assert.equal(
            explainFailure(new OutboxError("NOT_FOUND", "no such table")),
            undefined,
            "an error none of the cases explain keeps its own text",
        );
    });

    it("no credentials anywhere (empty environment, no profile, no instance role) is reported as credentials, naming AWS_PROFILE and AWS_ACCESS_KEY_ID", async () => {
        const run = await spawnCli(
            [
                "verify",
                "--table",
                "orders-outbox",
                "--endpoint",
                `http://127.0.0.1:${await closedPort()}`,
                "--timeout",
                "20",
            ],
            {
                AWS_REGION: LOCAL_REGION,
                AWS_CONFIG_FILE: path.join(os.tmpdir(), "dynamodb-outbox-no-such-config"),
                AWS_SHARED_CREDENTIALS_FILE: path.join(os.tmpdir(), "dynamodb-outbox-no-such-credentials"),
                // No instance metadata service in a test: the chain must end at once, as it does on a laptop.
                AWS_EC2_METADATA_DISABLED: "true",
            },
        );
        assert.equal(run.code, 1, run.stderr);
        assert.match(
            run.stderr,
            /^dynamodb-outbox verify: describe table "orders-outbox" failed: no usable AWS credentials for DynamoDB \(CredentialsProviderError: [^)]*\): set AWS_PROFILE to a profile of ~\/\.aws\/config \(run aws sso login first for an SSO profile\), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run where an instance or task role is available\n$/m,
        );
        assert.doesNotMatch(run.stderr, /UNAVAILABLE/);
    });
});

describe("cli: every file a command reads is read within --timeout (real named pipes, the real executable)", function () {
    this.timeout(300_000);
    let silent: { url: string; close(): Promise<void> };
    let dir: string;
    let fifo: string;
    before(async () => {
        silent = await silentServer();
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "dynamodb-outbox-fifo-"));
        fifo = path.join(dir, "nobody-writes");
        execFileSync("mkfifo", [fifo]);
    });
    after(async () => {
        await silent?.close();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    /**
     * The guard: a read that blocks past --timeout (and keeps the process from exiting) is killed here. Generous,
     * because the executable's own start (ts-node compiling the sources) takes tens of seconds on a loaded machine.
     */
    const GUARD_MS = 120_000;

    it("doctor --outputs <a named pipe nobody writes to> ends at --timeout, exit 1, naming the file, and the process exits", async () => {
        const run = await spawnCli(
            ["doctor", "--outputs", fifo, "--endpoint", silent.url, "--timeout", "30"],
            KEYS,
            GUARD_MS,
        );
        assert.equal(
            run.signal,
            null,
            `killed by the test's guard after ${run.elapsedMs} ms: the read blocked\n${run.stderr}`,
        );
        assert.equal(run.code, 1, run.stderr);
        assert.match(run.stderr, /^dynamodb-outbox doctor: OutboxError \[TIMEOUT\]: /m);
        assert.ok(
            run.stderr.includes(
                `--outputs "${fifo}" was not read to its end within --timeout 30.0 s (it bounds the whole doctor command): nothing ended it, as with a named pipe nobody writes to, or a terminal or /dev/stdin with no input; write it to a file first: pulumi stack output --json > ${fifo}`,
            ),
            run.stderr,
        );
        assert.doesNotMatch(run.stderr, /was still open/, "nothing was left running: the process exited by itself");
    });

    it("doctor --outputs /dev/stdin with no input (a pipe held open) ends at --timeout naming /dev/stdin; with the outputs piped in, it reads them and goes on", async () => {
        let held: NodeJS.WritableStream | undefined;
        const waiting = await spawnCli(
            ["doctor", "--outputs", "/dev/stdin", "--endpoint", silent.url, "--timeout", "30"],
            KEYS,
            GUARD_MS,
            (input) => (held = input),
        );
        held?.end();
        assert.equal(waiting.signal, null, `killed by the test's guard: ${waiting.stderr}`);
        assert.equal(waiting.code, 1, waiting.stderr);
        assert.match(waiting.stderr, /--outputs "\/dev\/stdin" was not read to its end within --timeout 30\.0 s/);

        // A closed port answers at once: the run gets past the read, to DescribeTable, whatever the machine's load.
        const refused = `http://127.0.0.1:${await closedPort()}`;
        const piped = await spawnCli(
            ["doctor", "--outputs", "/dev/stdin", "--endpoint", refused, "--timeout", "60"],
            KEYS,
            GUARD_MS,
            (input) => input.end(JSON.stringify({ tableName: "orders-outbox" })),
        );
        assert.equal(piped.signal, null, `killed by the test's guard: ${piped.stderr}`);
        assert.match(
            piped.stderr,
            /cannot reach DynamoDB at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/,
            "the outputs were read: the run went on to DescribeTable",
        );
    });

    it("doctor --outputs /dev/zero (a file that never ends) is refused past 1 MiB, naming the file", async () => {
        const run = await spawnCli(["doctor", "--outputs", "/dev/zero", "--timeout", "60"], KEYS, GUARD_MS);
        assert.equal(run.signal, null, `killed by the test's guard: ${run.stderr}`);
        assert.match(
            run.stderr,
            /--outputs "\/dev\/zero" cannot be read \(it holds more than 1048576 bytes, and stack outputs are a few KB\)/,
        );
    });

    const commands: [string, string[], number, RegExp][] = [
        ["verify", ["--table", "orders-outbox"], 2, /^dynamodb-outbox: /m],
        ["migrate", ["--table", "orders-outbox"], 2, /^dynamodb-outbox: /m],
        ["doctor", ["--table", "orders-outbox"], 2, /^dynamodb-outbox: /m],
        [
            "redrive",
            ["--table", "orders-outbox", "--dlq-url", "http://127.0.0.1:9/000000000000/orders-dlq"],
            1,
            /^redrive failed: /m,
        ],
    ];
    for (const variable of ["AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"]) {
        for (const [command, args, code, prefix] of commands) {
            it(`${command} with ${variable} a named pipe nobody writes to (the AWS SDK reads it) is refused before any call, naming the variable and the file, and the process exits`, async () => {
                const run = await spawnCli(
                    [command, ...args, "--endpoint", silent.url, "--timeout", "5"],
                    // No credentials in the environment: the SDK's chain reads the shared files.
                    { AWS_REGION: LOCAL_REGION, AWS_EC2_METADATA_DISABLED: "true", [variable]: fifo },
                    GUARD_MS,
                );
                assert.equal(
                    run.signal,
                    null,
                    `killed by the test's guard after ${run.elapsedMs} ms: the SDK's read blocked the exit\n${run.stderr}`,
                );
                assert.equal(run.code, code, run.stderr);
                assert.match(run.stderr, prefix);
                assert.ok(
                    run.stderr.includes(
                        `${variable} "${fifo}" is a named pipe: the AWS SDK reads its settings and credentials files in a thread that --timeout cannot stop, so a read that never ends (a pipe nobody writes to, a terminal) would hang ${command}; point ${variable} at a regular file (or /dev/null)`,
                    ),
                    run.stderr,
                );
            });
        }
    }

    it("an AWS_CONFIG_FILE of /dev/null (a common way to ignore ~/.aws/config) is still taken", async () => {
        const refused = `http://127.0.0.1:${await closedPort()}`;
        const run = await spawnCli(
            ["verify", "--table", "orders-outbox", "--endpoint", refused, "--timeout", "60"],
            { ...KEYS, AWS_CONFIG_FILE: "/dev/null" },
            GUARD_MS,
        );
        assert.equal(run.signal, null, run.stderr);
        assert.match(run.stderr, /cannot reach DynamoDB at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
    });
});
