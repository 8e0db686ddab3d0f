/**
 * `doctor --outputs file.json`: the Outbox component's stack outputs, as `pulumi stack output --json` writes them.
 *
 * @packageDocumentation
 */
import { readFileSync } from "node:fs";
import { OutboxError } from "../../runtime/errors";

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

function bad(file: string, what: string): OutboxError {
    return new OutboxError(
        "INVALID_CONFIG",
        `--outputs "${file}" ${what}; write it with: pulumi stack output --json > ${file}`,
        { context: { flag: "outputs", file } },
    );
}

/**
 * Read and check a stack outputs file.
 *
 * @param file - The path given to `--outputs`.
 * @param read - How the file is read. @default readFileSync as UTF-8
 * @throws OutboxError `INVALID_CONFIG` naming the file when it cannot be read, is not a JSON object, has no
 *   `tableName`, or has a key of the list above that is not a non-empty string. A `null` counts as absent: an
 *   output the Outbox leaves undefined (`topicArn` with a queue or a bus) may be written so.
 */
export function readStackOutputs(
    file: string,
    read: (file: string) => string = (f) => readFileSync(f, "utf8"),
): StackOutputs {
    let text: string;
    try {
        text = read(file);
    } catch (err) {
        throw bad(file, `cannot be read (${err instanceof Error ? err.message : String(err)})`);
    }
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
