/**
 * `npm start`, run as a user runs it: a real child process with DynamoDB Local (Java), fauxqs, the producer,
 * the local event source mapping into the publisher, the sweeper and the consumer. These tests check what the
 * user sees (the summary line, an empty stderr) and that nothing is left running afterwards, however the run
 * ends: normal exit, SIGTERM, Ctrl-C, or a crash.
 *
 * DynamoDB Local is a Java child process, found by the `-port <n>` its command line carries (the port the demo
 * prints). fauxqs runs inside the demo's own process, so "no fauxqs left" means its port no longer accepts
 * connections.
 */
import * as assert from "node:assert/strict";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { DescribeTableCommand } from "@aws-sdk/client-dynamodb";
import { JAVA_MISSING_MESSAGE } from "../../../dev/emulators/dynamodb-local";
import { createProgressLine } from "../../../dev/demo/progress";
import { parseStartArgs, START_DEFAULTS, UsageError } from "../../../dev/demo/start-args";
import { dynamoClient, dynamoEndpoint } from "../../support/dynamodb";

const REPO = path.join(__dirname, "..", "..", "..");
const SUMMARY = /^delivered (\d+)\/(\d+) lost (\d+) duplicates (\d+) dlq (\d+)$/;

interface Run {
    readonly child: ChildProcess;
    stdout: string;
    stderr: string;
    readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `npm start -- <args>` when package.json has the script, else the same script through ts-node. */
function startCommand(args: readonly string[]): { command: string; argv: string[] } {
    const manifest = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")) as {
        scripts?: Record<string, string>;
    };
    if (manifest.scripts?.start !== undefined) return { command: "npm", argv: ["start", "--", ...args] };
    return { command: process.execPath, argv: ["-r", "ts-node/register/transpile-only", "dev/demo/start.ts", ...args] };
}

function spawnRun(command: string, argv: readonly string[], detached = false): Run {
    const child = spawn(command, argv, {
        cwd: REPO,
        detached,
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, npm_config_update_notifier: "false", FORCE_COLOR: "0" },
    });
    return collected(child);
}

/** A child process with its output collected as it comes and its exit as a promise. */
function collected(child: ChildProcess): Run {
    const run: Run = {
        child,
        stdout: "",
        stderr: "",
        exited: new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal }))),
    };
    child.stdout!.on("data", (chunk: Buffer) => (run.stdout += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (run.stderr += chunk.toString()));
    return run;
}

/** Resolve once `pattern` shows up on stdout; fail if the process exits first or after `timeoutMs`. */
async function waitFor(run: Run, pattern: RegExp, timeoutMs = 90_000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    void run.exited.then(() => (exited = true));
    for (;;) {
        const match = run.stdout.match(pattern);
        if (match !== null) return match;
        if (exited) throw new Error(`exited before ${pattern}; stdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
        if (Date.now() > deadline)
            throw new Error(`no ${pattern} after ${timeoutMs} ms; stdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
}

/** The pids of DynamoDB Local processes listening on `port`. */
function dynamoProcessesOnPort(port: string): number[] {
    const out = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" });
    return out
        .split("\n")
        .filter((line) => line.includes("DynamoDBLocal.jar") && new RegExp(`-port ${port}(\\s|$)`).test(line))
        .map((line) => Number(line.trim().split(/\s+/)[0]));
}

/** The direct children of `pid`. */
function childProcessesOf(pid: number): { pid: number; args: string }[] {
    const out = execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" });
    return out.split("\n").flatMap((line) => {
        const m = line.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/);
        return m !== null && Number(m[2]) === pid ? [{ pid: Number(m[1]), args: m[3]! }] : [];
    });
}

/** Whether process `pid` is still running (a zombie counts as gone). */
function alive(pid: number): boolean {
    try {
        const state = execFileSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" }).trim();
        return state !== "" && !state.startsWith("Z");
    } catch {
        return false;
    }
}

/** Whether something accepts TCP connections on loopback `port`. */
function listening(port: string): Promise<boolean> {
    return new Promise((resolve) => {
        const socket = net.connect(Number(port), "127.0.0.1");
        socket.once("connect", () => {
            socket.destroy();
            resolve(true);
        });
        socket.once("error", () => resolve(false));
    });
}

/** The ports the demo printed: DynamoDB Local's and fauxqs's. */
function printedPorts(stdout: string): { dynamo: string; fauxqs: string } {
    const dynamo = stdout.match(/DynamoDB Local http:\/\/127\.0\.0\.1:(\d+)/);
    const fauxqs = stdout.match(/\(fauxqs\) at http:\/\/127\.0\.0\.1:(\d+)/);
    assert.ok(dynamo !== null && fauxqs !== null, `ports printed:\n${stdout}`);
    return { dynamo: dynamo[1]!, fauxqs: fauxqs[1]! };
}

async function assertNothingLeft(ports: { dynamo: string; fauxqs: string }): Promise<void> {
    // The Java process may take a moment to be reaped after its parent saw it exit.
    for (let i = 0; i < 50 && dynamoProcessesOnPort(ports.dynamo).length > 0; i += 1)
        await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(dynamoProcessesOnPort(ports.dynamo), [], `DynamoDB Local on port ${ports.dynamo} left running`);
    assert.equal(await listening(ports.dynamo), false, `port ${ports.dynamo} still accepts connections`);
    assert.equal(await listening(ports.fauxqs), false, `fauxqs port ${ports.fauxqs} still accepts connections`);
}

describe("npm start (end to end)", function () {
    this.timeout(180_000);
    const started: Run[] = [];

    afterEach(async () => {
        // A failed assertion must not leave a demo (and its Java) running.
        for (const run of started.splice(0)) {
            if (run.child.exitCode === null && run.child.signalCode === null) {
                run.child.kill("SIGTERM");
                await run.exited;
            }
        }
    });

    /** Runs `npm start -- <args>` to its end; the afterEach stops it if a test fails first. */
    async function npmStart(args: string[]): Promise<{ run: Run; code: number | null; lines: string[] }> {
        const { command, argv } = startCommand(args);
        const run = spawnRun(command, argv);
        started.push(run);
        const { code } = await run.exited;
        return { run, code, lines: run.stdout.trimEnd().split("\n") };
    }

    /** A clean run: nothing on stderr, exit 0, and neither DynamoDB Local nor fauxqs left running. */
    async function endsClean(run: Run, code: number | null): Promise<void> {
        assert.equal(run.stderr, "", "stderr is empty on a clean run");
        assert.equal(code, 0);
        await assertNothingLeft(printedPorts(run.stdout));
    }

    it("npm start -- --count 50: everything delivered, nothing lost, nothing on stderr, nothing left running", async () => {
        const { run, code, lines } = await npmStart(["--count", "50"]);
        const last = lines[lines.length - 1]!;
        const match = last.match(SUMMARY);
        assert.ok(match !== null, `last line is the summary, got ${JSON.stringify(last)}\n${run.stdout}`);
        assert.deepEqual(match.slice(1).map(Number), [50, 50, 0, 0, 0], last);
        await endsClean(run, code);
    });

    it("npm start -- --regions 2: a global table on the two-region stand-in, a writer and a relay per region; each event, keyed or keyless, published exactly once, each customer in write order; nothing left running", async () => {
        const { run, code, lines } = await npmStart(["--regions", "2", "--count", "60", "--rate", "0"]);
        assert.deepEqual(lines.at(-1)!.match(SUMMARY)?.slice(1).map(Number), [60, 60, 0, 0, 0], run.stdout);
        assert.match(run.stdout, /\n {2}published {2}once 60, twice 0, never 0\n/);
        assert.match(
            run.stdout,
            /\n {2}written {4}60 events: 30 from us-east-1, 30 from us-west-2; 30 keyed over 4 customers/,
        );
        assert.match(run.stdout, /\n {2}order {6}4 customers, 0 out of order within a region\n/);
        assert.equal(run.stderr, "", "stderr is empty on a clean run");
        assert.equal(code, 0);
        const dynamoPorts = [...run.stdout.matchAll(/DynamoDB Local http:\/\/127\.0\.0\.1:(\d+)/g)].map((m) => m[1]!);
        assert.equal(dynamoPorts.length, 2, run.stdout);
        const serverPort = run.stdout.match(/AWS fault server http:\/\/127\.0\.0\.1:(\d+)/)?.[1];
        assert.ok(serverPort !== undefined, run.stdout);
        for (const port of dynamoPorts) {
            for (let i = 0; i < 50 && dynamoProcessesOnPort(port).length > 0; i += 1)
                await new Promise((r) => setTimeout(r, 100));
            assert.deepEqual(dynamoProcessesOnPort(port), [], `DynamoDB Local on port ${port} left running`);
        }
        assert.equal(await listening(serverPort), false, "the fault server stopped");
    });

    it("npm start -- --payload-bytes 1048576: each payload goes to fauxqs's S3, and the consumer fetches and checks every one", async () => {
        const { run, code, lines } = await npmStart(["--count", "5", "--rate", "0", "--payload-bytes", "1048576"]);
        assert.deepEqual(lines.at(-1)!.match(SUMMARY)?.slice(1).map(Number), [5, 5, 0, 0, 0], run.stdout);
        assert.match(
            run.stdout,
            /\n {2}payloads {3}1048576 bytes each: 5 stored in S3 \(bucket outbox-demo-payloads-\w+\), 5 fetched and checked \(length, SHA-256\) by the consumer, 0 failed\n/,
        );
        await endsClean(run, code);
    });

    it("npm start -- --destination sqs --keys 3: the relay sends to an SQS FIFO queue (fauxqs) the consumer reads; everything delivered in per-customer order", async () => {
        const { run, code, lines } = await npmStart(["--count", "30", "--keys", "3", "--destination", "sqs"]);
        assert.deepEqual(lines.at(-1)!.match(SUMMARY)?.slice(1).map(Number), [30, 30, 0, 0, 0], run.stdout);
        assert.match(run.stdout, /an SQS FIFO queue as the destination, and the DLQ, on SQS \(fauxqs\) at /);
        assert.match(run.stdout, /; SQS calls \d+\n/);
        assert.match(run.stdout, /, 0 out of order \(a FIFO queue, one message group per customer\)\n/);
        await endsClean(run, code);
    });

    it("npm start -- --destination eventbridge --keys 3: the relay puts events on the fault server's stand-in bus, routed to the queue the consumer reads; it says it is a stand-in and that a bus keeps no order", async () => {
        const { run, code, lines } = await npmStart(["--count", "30", "--keys", "3", "--destination", "eventbridge"]);
        assert.deepEqual(lines.at(-1)!.match(SUMMARY)?.slice(1).map(Number), [30, 30, 0, 0, 0], run.stdout);
        assert.match(
            run.stdout,
            /EventBridge bus at http:\S+ \(a stand-in: the fault server, since no maintained EventBridge emulator exists\)/,
        );
        assert.match(run.stdout, /; EventBridge calls \d+\n/);
        assert.match(
            run.stdout,
            /, 0 out of order as the stand-in delivered them \(in put order; a real EventBridge bus keeps no order/,
        );
        await endsClean(run, code);
        const bus = run.stdout.match(/EventBridge bus at http:\/\/127\.0\.0\.1:(\d+)/)![1]!;
        assert.equal(await listening(bus), false, `the fault server's port ${bus} still accepts connections`);
    });

    it("sends expired orders to the DLQ and keeps per-customer order; with --keep, stays up until SIGTERM stops everything", async () => {
        const run = spawnRun(process.execPath, [
            "-r",
            "ts-node/register/transpile-only",
            "dev/demo/start.ts",
            "--count",
            "40",
            "--keys",
            "4",
            "--expire-ratio",
            "0.25",
            "--keep",
        ]);
        started.push(run);
        await waitFor(run, /--keep: staying up/);
        assert.match(run.stdout, /^delivered 30\/40 lost 0 duplicates \d+ dlq 10$/m);
        assert.match(run.stdout, /dlq +10 \(expected 10 expired\)/);
        assert.match(run.stdout, /, 0 out of order/);
        const ports = printedPorts(run.stdout);
        assert.equal(dynamoProcessesOnPort(ports.dynamo).length, 1, "DynamoDB Local runs while kept up");
        assert.equal(await listening(ports.fauxqs), true, "fauxqs answers while kept up");
        run.child.kill("SIGTERM");
        const { code } = await run.exited;
        assert.equal(code, 143);
        assert.equal(run.stderr, "");
        await assertNothingLeft(ports);
    });

    it("--endpoint uses a running DynamoDB, starts no DynamoDB Local, and deletes its demo table on exit", async () => {
        const endpoint = await dynamoEndpoint();
        const client = await dynamoClient();
        const run = spawnRun(process.execPath, [
            "-r",
            "ts-node/register/transpile-only",
            "dev/demo/start.ts",
            "--count",
            "10",
            "--endpoint",
            endpoint,
        ]);
        started.push(run);
        let children: number[] = [];
        const watch = setInterval(() => {
            children = children.concat(
                childProcessesOf(run.child.pid!)
                    .filter((p) => p.args.includes("DynamoDBLocal.jar"))
                    .map((p) => p.pid),
            );
        }, 100);
        const { code } = await run.exited.finally(() => clearInterval(watch));
        assert.equal(code, 0, run.stderr);
        assert.match(run.stdout, /^delivered 10\/10 lost 0 duplicates 0 dlq 0$/m);
        assert.match(run.stdout, new RegExp(`DynamoDB at ${endpoint.replace(/[.]/g, "\\.")}`));
        assert.deepEqual(children, [], "no DynamoDB Local started");
        const table = run.stdout.match(/table (outbox-demo-\S+) created/)![1]!;
        await assert.rejects(
            client.send(new DescribeTableCommand({ TableName: table })),
            (err: Error) => err.name === "ResourceNotFoundException",
            `${table} deleted`,
        );
    });

    it("stops DynamoDB Local when SIGTERM arrives while it is still starting", async () => {
        const run = spawnRun(process.execPath, [
            "-r",
            "ts-node/register/transpile-only",
            "dev/demo/start.ts",
            "--count",
            "5",
        ]);
        started.push(run);
        // The Java child exists well before it answers; signal as soon as it shows up.
        let java: number[] = [];
        for (let i = 0; i < 600 && java.length === 0; i += 1) {
            java = childProcessesOf(run.child.pid!)
                .filter((p) => p.args.includes("DynamoDBLocal.jar"))
                .map((p) => p.pid);
            if (java.length === 0) await new Promise((r) => setTimeout(r, 25));
        }
        assert.equal(java.length, 1, "DynamoDB Local was started");
        run.child.kill("SIGTERM");
        const { code } = await run.exited;
        assert.equal(code, 143);
        for (let i = 0; i < 50 && alive(java[0]!); i += 1) await new Promise((r) => setTimeout(r, 100));
        assert.equal(alive(java[0]!), false, `DynamoDB Local (pid ${java[0]}) left running`);
    });

    it("stops everything on Ctrl-C (SIGINT to the whole foreground process group)", async () => {
        const run = spawnRun(
            process.execPath,
            ["-r", "ts-node/register/transpile-only", "dev/demo/start.ts", "--count", "5", "--keep"],
            true,
        );
        started.push(run);
        await waitFor(run, /--keep: staying up/);
        const ports = printedPorts(run.stdout);
        process.kill(-run.child.pid!, "SIGINT");
        const { code } = await run.exited;
        assert.equal(code, 130);
        assert.match(run.stdout, /SIGINT received: stopping the local parts/);
        await assertNothingLeft(ports);
    });

    it("stops DynamoDB Local when the script crashes after starting it (uncaught exception)", async () => {
        // A script shaped like start.ts that crashes once DynamoDB Local is up: the shutdown must still stop Java.
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-crash-"));
        const script = path.join(dir, "crash.ts");
        fs.writeFileSync(
            script,
            [
                `import { startDynamoDbLocal } from ${JSON.stringify(path.join(REPO, "dev", "emulators", "dynamodb-local"))};`,
                `import { installShutdown } from ${JSON.stringify(path.join(REPO, "dev", "demo", "shutdown"))};`,
                "const shutdown = installShutdown();",
                "void (async () => {",
                "    const dynamo = await startDynamoDbLocal();",
                '    shutdown.add("DynamoDB Local", () => dynamo.stop());',
                "    process.stdout.write(`port ${new URL(dynamo.endpoint).port}\\n`);",
                '    setTimeout(() => { throw new Error("boom after start"); }, 10);',
                "})();",
            ].join("\n"),
        );
        try {
            const run = spawnRun(process.execPath, ["-r", "ts-node/register/transpile-only", script]);
            started.push(run);
            const port = (await waitFor(run, /port (\d+)/))[1]!;
            const { code } = await run.exited;
            assert.equal(code, 1);
            assert.match(run.stderr, /boom after start/);
            for (let i = 0; i < 50 && dynamoProcessesOnPort(port).length > 0; i += 1)
                await new Promise((r) => setTimeout(r, 100));
            assert.deepEqual(dynamoProcessesOnPort(port), []);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it("says in one line how to install Java when it is missing, and starts nothing", async () => {
        const noJava = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-nojava-"));
        try {
            const child = spawn(
                process.execPath,
                ["-r", "ts-node/register/transpile-only", "dev/demo/start.ts", "--count", "5"],
                {
                    cwd: REPO,
                    stdio: ["ignore", "pipe", "pipe"],
                    env: { ...process.env, PATH: noJava, JAVA_HOME: "" },
                },
            );
            const run = collected(child);
            started.push(run);
            const { code } = await run.exited;
            assert.equal(code, 1);
            assert.equal(run.stdout, "");
            assert.equal(run.stderr, `${JAVA_MISSING_MESSAGE}\n`);
        } finally {
            fs.rmSync(noJava, { recursive: true, force: true });
        }
    });

    it("refuses a bad flag with one clear line on stderr and starts nothing", async () => {
        const run = spawnRun(process.execPath, [
            "-r",
            "ts-node/register/transpile-only",
            "dev/demo/start.ts",
            "--count",
            "lots",
        ]);
        started.push(run);
        const { code } = await run.exited;
        assert.equal(code, 2);
        assert.equal(run.stdout, "");
        assert.equal(
            run.stderr,
            'npm start: --count is "lots"; expected an integer from 1 to 1000000. Example: --count 100\n',
        );
    });
});

describe("npm start flags", () => {
    it("defaults to 1000 keyless orders with nothing expired or failing", () => {
        assert.deepEqual(parseStartArgs([]), START_DEFAULTS);
        assert.equal(START_DEFAULTS.count, 1000);
    });

    it("reads every flag, as --flag value and --flag=value", () => {
        assert.deepEqual(
            parseStartArgs([
                "--count",
                "50",
                "--rate=0",
                "--keys",
                "4",
                "--parallelization-factor=4",
                "--expire-ratio",
                "0.1",
                "--fail-rate=0.2",
                "--destination",
                "eventbridge",
                "--endpoint",
                "http://127.0.0.1:8000/",
                "--keep",
            ]),
            {
                ...START_DEFAULTS,
                count: 50,
                rate: 0,
                keys: 4,
                parallelizationFactor: 4,
                expireRatio: 0.1,
                failRate: 0.2,
                destination: "eventbridge",
                endpoint: "http://127.0.0.1:8000",
                keep: true,
            },
        );
        assert.equal(parseStartArgs(["--help"]).help, true);
        assert.deepEqual(parseStartArgs(["--regions", "2", "--count", "10", "--keys", "3", "--rate=0", "--keep"]), {
            ...START_DEFAULTS,
            regions: 2,
            count: 10,
            keys: 3,
            rate: 0,
            keep: true,
        });
        assert.equal(parseStartArgs(["--payload-bytes", "10000000"]).payloadBytes, 10_000_000);
        for (const kind of ["sns", "sqs", "eventbridge"] as const)
            assert.equal(parseStartArgs([`--destination=${kind}`]).destination, kind);
        assert.equal(START_DEFAULTS.destination, "sns");
        // A consumer that reads a queue resolves claim checks through parseDelivery, with or without failing calls.
        assert.equal(
            parseStartArgs(["--payload-bytes", "300000", "--fail-rate", "0.1", "--destination", "sqs"]).failRate,
            0.1,
        );
    });

    const refused: [string[], RegExp][] = [
        [["--count", "0"], /^--count is "0"; expected an integer from 1 to 1000000\. Example: --count 100$/],
        [["--count", "1.5"], /^--count is "1\.5"; expected an integer/],
        [["--count", ""], /^--count is ""; expected an integer/],
        [["--rate", "-1"], /^--rate is "-1"; expected a number of orders per second from 0/],
        [["--keys", "x"], /^--keys is "x"; expected an integer from 0/],
        [
            ["--parallelization-factor", "11"],
            /^--parallelization-factor is "11"; expected an integer from 1 to 10\. Example: --parallelization-factor 4$/,
        ],
        [["--parallelization-factor", "0"], /^--parallelization-factor is "0"; expected an integer from 1 to 10/],
        [["--expire-ratio", "1.5"], /^--expire-ratio is "1\.5"; expected a share from 0 to 1/],
        [["--fail-rate", "1"], /^--fail-rate is "1"; expected a share from 0 to 0\.9/],
        [["--endpoint", "localhost:8000"], /^--endpoint is "localhost:8000"; expected an http\(s\) URL/],
        [["--count"], /^--count needs a value, e\.g\. --count 100$/],
        [["--count", "--keep"], /^--count needs a value/],
        [["--keep=yes"], /^--keep takes no value/],
        [["--cuont", "5"], /^unknown option "--cuont"; the options are --count, /],
        [["--count", "5", "--count", "6"], /^--count is given twice/],
        [["--count", "5", "--keys", "6"], /^--keys is 6 but --count is 5/],
        // util.parseArgs in strict mode: a value with one leading dash is written --flag=-value.
        [["--count", "-5"], /^--count is "-5"; expected an integer from 1 to 1000000\. Example: --count 100$/],
        [["--keys", "-0"], /^--keys is followed by "-0", which reads as a flag; if it is the value, write --keys=-0$/],
        [["--count", "--"], /^--count needs a value, e\.g\. --count 100$/],
        [["-x"], /^unknown option "-x"; the options are --count, /],
        [["5"], /^unknown option "5"; the options are --count, /],
        [["--keep", "--keep=yes"], /^--keep is given twice; give it once$/],
        [
            ["--payload-bytes", "100000001"],
            /^--payload-bytes is "100000001"; expected an integer number of bytes from 0 \(the small payload\) to 100000000\. Example: --payload-bytes 1048576$/,
        ],
        [["--payload-bytes", "1.5"], /^--payload-bytes is "1\.5"; expected an integer number of bytes/],
        [
            ["--payload-bytes", "1048576", "--fail-rate", "0.1"],
            /^--payload-bytes and --fail-rate do not go together with --destination sns: /,
        ],
        [
            ["--destination", "kafka"],
            /^--destination is "kafka"; expected one of sns, sqs, eventbridge \(an SNS topic, an SQS queue or an EventBridge bus\)\. Example: --destination sqs$/,
        ],
        [["--destination", "SQS"], /^--destination is "SQS"; expected one of sns, sqs, eventbridge/],
        [["--destination"], /^--destination needs a value, e\.g\. --destination sqs$/],
        [
            ["--regions", "3"],
            /^--regions is "3"; expected 1 \(one table\) or 2 \(a global table on the two-region stand-in\)\. Example: --regions 2$/,
        ],
        [
            ["--regions", "2", "--destination", "sqs"],
            /^--destination does not go with --regions 2, which runs its own world \(two DynamoDB Locals and one SNS topic on the AWS fault server\); with it give only --count, --keys, --rate, --regions, --keep$/,
        ],
        [["--endpoint", "http://127.0.0.1:8000", "--regions", "2"], /^--endpoint does not go with --regions 2/],
    ];
    for (const [argv, message] of refused) {
        it(`refuses ${argv.join(" ")}`, () => {
            assert.throws(
                () => parseStartArgs(argv),
                (err: unknown) => err instanceof UsageError && message.test(err.message),
            );
        });
    }
});

describe("npm start progress line", () => {
    function fakeStream(isTTY: boolean): { stream: NodeJS.WriteStream; written: string[] } {
        const written: string[] = [];
        const stream = {
            isTTY,
            columns: 40,
            write: (chunk: string) => written.push(chunk),
        } as unknown as NodeJS.WriteStream;
        return { stream, written };
    }

    it("rewrites one line in place on a terminal, cut to its width, and clears it before a normal line", () => {
        const { stream, written } = fakeStream(true);
        const progress = createProgressLine({ stream });
        progress.update("written 1/10");
        progress.update("written 2/10 " + "x".repeat(100));
        progress.print("summary");
        assert.deepEqual(written, [
            "\r\x1b[2Kwritten 1/10",
            `\r\x1b[2K${("written 2/10 " + "x".repeat(100)).slice(0, 39)}`,
            "\r\x1b[2K",
            "summary\n",
        ]);
    });

    it("writes plain lines, at most one per interval and none repeated, when stdout is not a terminal", () => {
        const { stream, written } = fakeStream(false);
        const progress = createProgressLine({ stream, plainIntervalMs: 60_000 });
        progress.update("written 1/10");
        progress.update("written 2/10");
        progress.print("summary");
        progress.done();
        assert.deepEqual(written, ["written 1/10\n", "summary\n"]);
        assert.ok(written.every((w) => !w.includes("\r")));
    });
});
