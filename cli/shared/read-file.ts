/**
 * The files a command reads, read under its deadline (cli/shared/deadline.ts).
 *
 * - A file the command is given (doctor's `--outputs`) is read by {@link readFileWithin}. Nothing of the read
 *   blocks the event loop or a thread: the file is opened non-blocking (a named pipe with no writer opens at once),
 *   and then read as a stream of its kind (a pipe or a terminal through the event loop's own polling, a regular file
 *   in chunks), so the deadline's timer runs and, when it fires, the read is stopped and its descriptor closed
 *   (`/dev/stdin` is read from descriptor 0, whatever it is: a pipe, a socket, a terminal or a file). A
 *   plain `readFileSync` would block the timer; `fs.promises.readFile` would hold one of libuv's threads in a
 *   `read()` that never returns, and Node joins those threads when the process exits, so the process would not
 *   end. The read is also bounded in size ({@link MAX_INPUT_FILE_BYTES}), so `/dev/zero` ends too.
 * - The files the AWS SDK reads for its settings and credentials (`AWS_CONFIG_FILE`, `AWS_SHARED_CREDENTIALS_FILE`,
 *   `AWS_WEB_IDENTITY_TOKEN_FILE`) are read by the SDK in libuv's threads, which no deadline can stop, so
 *   {@link checkSdkFiles} refuses, before any client is made, one that is not a regular file (or `/dev/null`): a
 *   pipe, a socket or a device whose read might never end.
 *
 * @packageDocumentation
 */
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import type { Readable } from "node:stream";
import * as tty from "node:tty";
import { OutboxError } from "../../runtime/errors";
import type { CommandDeadline } from "./deadline";
import { seconds } from "./format";

/** The most bytes a command reads from one file it is given (1 MiB): stack outputs are a few KB. */
export const MAX_INPUT_FILE_BYTES = 1024 * 1024;

/** A file a command is given, as the messages name it. */
export interface InputFile {
    /** The path as given. */
    readonly path: string;
    /** The flag that gave it, without dashes, e.g. `outputs`. */
    readonly flag: string;
    /** How to make a file that can be read, for the messages, e.g. `pulumi stack output --json > outputs.json`. */
    readonly fix: string;
}

// O_NONBLOCK: a named pipe with no writer opens at once instead of blocking a thread; O_NOCTTY: a terminal given as
// the file does not become the process's controlling terminal. Neither exists on Windows, where the open is plain.
const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0) | (fs.constants.O_NOCTTY ?? 0);

/**
 * Paths that name the process's own standard input. It is read from descriptor 0, not opened again: opening
 * `/dev/stdin` fails when the input is a socket (as a parent process's pipe may be), and reopening a terminal is not
 * needed.
 */
const STDIN_PATHS: readonly string[] = ["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"];

function named(file: InputFile): string {
    return `--${file.flag} ${JSON.stringify(file.path)}`;
}

function cannotRead(file: InputFile, err: unknown): OutboxError {
    return new OutboxError(
        "INVALID_CONFIG",
        `${named(file)} cannot be read (${err instanceof Error ? err.message : String(err)}); write it with: ${file.fix}`,
        { context: { flag: file.flag, file: file.path }, cause: err },
    );
}

function notReadInTime(file: InputFile, deadline: CommandDeadline): OutboxError {
    return new OutboxError(
        "TIMEOUT",
        `${named(file)} was not read to its end within --timeout ${seconds(deadline.timeoutMs)} (it bounds the whole ${deadline.command} command): nothing ended it, as with a named pipe nobody writes to, or a terminal or /dev/stdin with no input; write it to a file first: ${file.fix}`,
        { context: { flag: file.flag, file: file.path, timeoutMs: deadline.timeoutMs } },
    );
}

/** Open without blocking; a deadline that runs out first wins, and the descriptor, if it comes later, is closed. */
function openWithin(file: InputFile, deadline: CommandDeadline): Promise<number> {
    return new Promise((resolve, reject) => {
        let settled = false;
        const onAbort = (): void => {
            settled = true;
            reject(notReadInTime(file, deadline));
        };
        if (deadline.signal.aborted) return onAbort();
        if (STDIN_PATHS.includes(file.path)) return resolve(0);
        deadline.signal.addEventListener("abort", onAbort, { once: true });
        fs.open(file.path, OPEN_FLAGS, (err, fd) => {
            deadline.signal.removeEventListener("abort", onAbort);
            if (settled) {
                if (err === null) fs.close(fd, () => undefined);
                return;
            }
            settled = true;
            if (err !== null) reject(cannotRead(file, err));
            else resolve(fd);
        });
    });
}

/** A stream of the descriptor's kind; it owns the descriptor and closes it when destroyed. */
function streamOf(fd: number, stats: fs.Stats): Readable {
    if (stats.isFIFO() || stats.isSocket()) return new net.Socket({ fd, readable: true, writable: false });
    if (tty.isatty(fd)) return new tty.ReadStream(fd);
    return fs.createReadStream("", { fd, autoClose: true });
}

/**
 * Read a file the command was given, as UTF-8 text, within the command's deadline and at most `maxBytes`.
 *
 * @param file - The path, and the flag and fix the messages name.
 * @param deadline - The command's deadline.
 * @param maxBytes - The most bytes read. @default MAX_INPUT_FILE_BYTES
 * @throws OutboxError `TIMEOUT` naming the file when the deadline runs out before the read ends; `INVALID_CONFIG`
 *   naming it when it cannot be opened or read, or holds more than `maxBytes`.
 */
export async function readFileWithin(
    file: InputFile,
    deadline: CommandDeadline,
    maxBytes: number = MAX_INPUT_FILE_BYTES,
): Promise<string> {
    const fd = await openWithin(file, deadline);
    let stream: Readable;
    try {
        stream = streamOf(fd, fs.fstatSync(fd));
    } catch (err) {
        fs.closeSync(fd);
        throw cannotRead(file, err);
    }
    return new Promise<string>((resolve, reject) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const finish = (err: OutboxError | undefined): void => {
            deadline.signal.removeEventListener("abort", onAbort);
            stream.removeAllListeners("data");
            stream.on("error", () => undefined);
            stream.destroy();
            if (err !== undefined) reject(err);
            else resolve(Buffer.concat(chunks).toString("utf8"));
        };
        const onAbort = (): void => finish(notReadInTime(file, deadline));
        stream.on("data", (chunk: Buffer | string) => {
            const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
            size += bytes.length;
            if (size > maxBytes)
                return finish(
                    cannotRead(file, new Error(`it holds more than ${maxBytes} bytes, and stack outputs are a few KB`)),
                );
            chunks.push(bytes);
        });
        stream.once("end", () => finish(undefined));
        stream.once("error", (err) => finish(cannotRead(file, err)));
        if (deadline.signal.aborted) onAbort();
        else deadline.signal.addEventListener("abort", onAbort, { once: true });
    });
}

/** A file the AWS SDK reads, and the variable that names it. */
interface SdkFile {
    readonly variable: string;
    readonly path: string;
}

/** The files the AWS SDK may read for its settings and credentials, as the environment names them. */
function sdkFiles(env: Readonly<Record<string, string | undefined>>): SdkFile[] {
    const home = env.HOME || env.USERPROFILE || os.homedir();
    const files: SdkFile[] = [
        { variable: "AWS_CONFIG_FILE", path: env.AWS_CONFIG_FILE || path.join(home, ".aws", "config") },
        {
            variable: "AWS_SHARED_CREDENTIALS_FILE",
            path: env.AWS_SHARED_CREDENTIALS_FILE || path.join(home, ".aws", "credentials"),
        },
    ];
    if (env.AWS_WEB_IDENTITY_TOKEN_FILE)
        files.push({ variable: "AWS_WEB_IDENTITY_TOKEN_FILE", path: env.AWS_WEB_IDENTITY_TOKEN_FILE });
    return files;
}

function kindOf(stats: fs.Stats): string {
    if (stats.isFIFO()) return "a named pipe";
    if (stats.isSocket()) return "a socket";
    if (stats.isCharacterDevice()) return "a character device";
    if (stats.isBlockDevice()) return "a block device";
    return "not a regular file";
}

/**
 * How long {@link checkSdkFiles} waits for one `stat` (a network file system that does not answer), ms; past it the
 * file is left to the SDK.
 */
const STAT_WAIT_MS = 2_000;

/** `stat` the file, or `undefined` when it is missing, unreadable, or does not answer within {@link STAT_WAIT_MS}. */
async function statWithin(file: string): Promise<fs.Stats | undefined> {
    let timer: NodeJS.Timeout | undefined;
    try {
        return await Promise.race([
            fs.promises.stat(file).catch(() => undefined),
            new Promise<undefined>((resolve) => {
                timer = setTimeout(() => resolve(undefined), STAT_WAIT_MS);
            }),
        ]);
    } finally {
        clearTimeout(timer);
    }
}

/**
 * Refuse, before any SDK client is made, a file the AWS SDK would read for its settings or credentials that is
 * not a regular file or `/dev/null`: the SDK reads it in one of libuv's threads, which no deadline stops and which
 * keeps the process from exiting. A missing file is fine (the SDK skips it). Only `stat` is called, which never
 * blocks on a pipe; it runs even when `--timeout` has already run out (a slow start), because the SDK would read the
 * files even then.
 *
 * @param env - The command's environment (the bin passes the process's, which the SDK reads).
 * @param command - The command, for the message.
 * @throws OutboxError `INVALID_CONFIG` naming the variable, the file and what it is.
 */
export async function checkSdkFiles(env: Readonly<Record<string, string | undefined>>, command: string): Promise<void> {
    const devNull = await statWithin(os.devNull);
    for (const file of sdkFiles(env)) {
        const stats = await statWithin(file.path);
        if (stats === undefined) continue;
        const isDevNull = devNull !== undefined && stats.dev === devNull.dev && stats.ino === devNull.ino;
        if (stats.isFile() || isDevNull) continue;
        throw new OutboxError(
            "INVALID_CONFIG",
            `${file.variable} ${JSON.stringify(file.path)} is ${kindOf(stats)}: the AWS SDK reads its settings and credentials files in a thread that --timeout cannot stop, so a read that never ends (a pipe nobody writes to, a terminal) would hang ${command}; point ${file.variable} at a regular file (or ${os.devNull})`,
            { context: { variable: file.variable, file: file.path } },
        );
    }
}
