/**
 * `doctor --outputs file.json`: the Outbox component's stack outputs, as `pulumi stack output --json` writes them.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../../runtime/errors";
import type { CommandDeadline } from "../shared/deadline";
import { readFileWithin, type InputFile } from "../shared/read-file";

/**
 * The stack outputs doctor reads. Every key is optional but `tableName`. `destinationArn` names the destination
 * (topic, queue or bus); a stack of 0.1, which has no `destinationArn`, names its topic with `topicArn`.
 */
export interface StackOutputs {
    readonly tableName: string;
    readonly tableArn?: string;
    readonly streamArn?: string;
    readonly destinationArn?: string;
    readonly topicArn?: string;
    readonly dlqUrl?: string;
    readonly dlqArn?: string;
    readonly publisherFunctionName?: string;
    readonly sweeperFunctionName?: string;
}

const KEYS = [
    "tableName",
    "tableArn",
    "streamArn",
    "destinationArn",
    "topicArn",
    "dlqUrl",
    "dlqArn",
    "publisherFunctionName",
    "sweeperFunctionName",
] as const;

/** How the outputs file is made, for the messages. */
function fixFor(file: string): string {
    return `pulumi stack output --json > ${file}`;
}

function bad(file: string, what: string): OutboxError {
    return new OutboxError("INVALID_CONFIG", `--outputs "${file}" ${what}; write it with: ${fixFor(file)}`, {
        context: { flag: "outputs", file },
    });
}

/**
 * Read a stack outputs file within the command's deadline ({@link readFileWithin}) and check it
 * ({@link parseStackOutputs}).
 *
 * @param file - The path given to `--outputs`.
 * @param deadline - The command's deadline.
 * @throws OutboxError `TIMEOUT` naming the file when its read does not end within `--timeout` (a named pipe nobody
 *   writes to, `/dev/stdin` with no input); `INVALID_CONFIG` naming it when it cannot be read, holds more than
 *   1 MiB, or {@link parseStackOutputs} refuses it.
 */
export async function readStackOutputs(file: string, deadline: CommandDeadline): Promise<StackOutputs> {
    const input: InputFile = { path: file, flag: "outputs", fix: fixFor(file) };
    return parseStackOutputs(file, await readFileWithin(input, deadline));
}

/**
 * Check the text of a stack outputs file.
 *
 * @param file - The path given to `--outputs`, for the messages.
 * @param text - What the file holds.
 * @throws OutboxError `INVALID_CONFIG` naming the file when it is not a JSON object, has no `tableName`, or has a
 *   key of the list above that is not a non-empty string. A `null` counts as absent: an output the Outbox leaves
 *   undefined (`topicArn` with a queue or a bus) may be written so.
 */
export function parseStackOutputs(file: string, text: string): StackOutputs {
    let value: unknown;
    try {
        value = JSON.parse(text);
    } catch {
        throw bad(file, "is not JSON");
    }
    if (typeof value !== "object" || value === null || Array.isArray(value))
        throw bad(file, "is not a JSON object of stack outputs");
    const record = value as Record<string, unknown>;
    const outputs: Record<string, string> = {};
    for (const key of KEYS) {
        const v = record[key];
        if (v === undefined || v === null) continue;
        if (typeof v !== "string" || v === "")
            throw bad(file, `has ${key} ${JSON.stringify(v)}; expected a non-empty string`);
        outputs[key] = v;
    }
    if (outputs.tableName === undefined) throw bad(file, "has no tableName (the Outbox component's tableName output)");
    return outputs as unknown as StackOutputs;
}
