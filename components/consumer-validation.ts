/**
 * Validation of {@link OutboxConsumerArgs}, before any resource is declared, in the terms of `validation.ts`: the
 * arg path, the bad value, what is allowed and the fix. Values that are still unknown (Outputs) are skipped where
 * the arg takes an Input; the destination's kind and FIFO-ness read from an Output ARN are checked when it resolves
 * ({@link destinationArnProblem}, called at deployment).
 *
 * @packageDocumentation
 */
import { DESTINATION_ARN_RULES, DESTINATION_KINDS, destinationKindOfArn } from "../runtime/destination/kind";
import { OutboxError } from "../runtime/errors";
import type { OutboxArgProblem } from "./arg-problem";
import { KMS_KEY_ARN, checkIntegerIn, isUnknown, show } from "./arg-checks";
import {
    CONSUMER_RANGES,
    ConsumerRangedArg,
    OutboxConsumerArgs,
    OutboxConsumerDestinationKind,
    SMALL_BATCH_MAX,
} from "./consumer-args";
import { S3_BUCKET_ARN } from "./payload-validation";

/** A Lambda function ARN, optionally with a version or alias qualifier. */
export const FUNCTION_ARN =
    /^arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:function:[A-Za-z0-9_-]{1,64}(:[A-Za-z0-9$_-]{1,128})?$/;

/** `Inbox`'s rule for a consumer's name. */
const CONSUMER_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;

/** DynamoDB's table name rule. */
const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;

/** IAM's role name rule. */
const ROLE_NAME = /^[\w+=,.@-]{1,64}$/;

/** The component's name: child names, log group names and the default consumer name derive from it. */
const COMPONENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/;

const KINDS: readonly string[] = Object.values(OutboxConsumerDestinationKind);

/** How a value is quoted: its JSON, or what an Output is. */
function shown(value: unknown): string {
    return isUnknown(value) ? "an Output (not known until deployment)" : show(value);
}

/** Whether `fifo` is refused for the destination `kind` (a bus is never FIFO). */
function fifoProblem(kind: OutboxConsumerDestinationKind, fifo: boolean): string | undefined {
    return kind === DESTINATION_KINDS.eventBridge && fifo
        ? "an EventBridge bus is never FIFO (it neither orders nor deduplicates events)"
        : undefined;
}

/**
 * What is wrong with a resolved destination ARN given the kind and FIFO-ness the component was built for, or
 * `undefined` when it matches. The component calls it at deployment on an ARN that was an Output.
 *
 * @param arn - The resolved ARN.
 * @param kind - The kind the children were declared for.
 * @param fifo - Whether the queue was declared FIFO.
 */
export function destinationArnProblem(
    arn: unknown,
    kind: OutboxConsumerDestinationKind,
    fifo: boolean,
): OutboxArgProblem | undefined {
    const actual = typeof arn === "string" ? destinationKindOfArn(arn) : undefined;
    if (actual === undefined) {
        return {
            path: "args.destinationArn",
            value: show(arn),
            allowed: `the ARN of an outbox's destination: ${Object.values(DESTINATION_ARN_RULES)
                .map((r) => `${r.what}, ${r.shape}`)
                .join("; or ")}`,
            fix: 'pass the Outbox\'s `destinationArn` output (in another stack: stackReference.getOutput("destinationArn"))',
        };
    }
    if (actual !== kind) {
        return {
            path: "args.destinationKind",
            value: show(kind),
            allowed: `${show(actual)}, the kind of ${arn as string}`,
            fix: `set destinationKind: "${actual}" (or pass a plain ARN, whose kind the component reads)`,
        };
    }
    const isFifo = (arn as string).endsWith(".fifo");
    if (actual !== DESTINATION_KINDS.eventBridge && isFifo !== fifo) {
        return {
            path: "args.fifo",
            value: show(fifo),
            allowed: `${isFifo} for the ${isFifo ? "FIFO" : "standard"} ${DESTINATION_ARN_RULES[actual].unit} ${arn as string}`,
            fix: `set fifo: ${isFifo}, so the consumer's queue and DLQ are ${isFifo ? "FIFO" : "standard"} like it`,
        };
    }
    return undefined;
}

function checkDestination(args: OutboxConsumerArgs, problems: OutboxArgProblem[]): void {
    const arn: unknown = args.destinationArn;
    const kind: unknown = args.destinationKind;
    if (kind !== undefined && (isUnknown(kind) || typeof kind !== "string" || !KINDS.includes(kind))) {
        problems.push({
            path: "args.destinationKind",
            value: shown(kind),
            allowed: `a plain one of ${KINDS.map((k) => show(k)).join(", ")} (it decides which children exist)`,
            fix: "pass the kind of the outbox's destination, or omit it with a plain destinationArn",
        });
        return;
    }
    const fifo: unknown = args.fifo;
    if (fifo !== undefined && typeof fifo !== "boolean") {
        problems.push({
            path: "args.fifo",
            value: shown(fifo),
            allowed: "a plain boolean (it decides whether the queue and its DLQ are FIFO)",
            fix: "pass true or false, or omit it with a plain destinationArn",
        });
        return;
    }
    if (arn === undefined || arn === null || arn === "") {
        problems.push({
            path: "args.destinationArn",
            value: show(arn),
            allowed: "the ARN of the outbox's destination: an SNS topic, an SQS queue or an EventBridge bus",
            fix: "pass the Outbox's `destinationArn` output",
        });
        return;
    }
    if (isUnknown(arn)) {
        const declared = (kind as OutboxConsumerDestinationKind | undefined) ?? DESTINATION_KINDS.sns;
        const problem = fifoProblem(declared, fifo === true);
        if (problem !== undefined) {
            problems.push({
                path: "args.fifo",
                value: "true",
                allowed: `false or omitted: ${problem}`,
                fix: "remove fifo",
            });
        }
        return;
    }
    const actual = typeof arn === "string" ? destinationKindOfArn(arn) : undefined;
    const problem = destinationArnProblem(
        arn,
        (kind as OutboxConsumerDestinationKind | undefined) ?? actual ?? DESTINATION_KINDS.sns,
        (fifo as boolean | undefined) ?? (typeof arn === "string" && arn.endsWith(".fifo")),
    );
    if (problem !== undefined) problems.push(problem);
    else if (actual === DESTINATION_KINDS.eventBridge && fifo === true) {
        problems.push({
            path: "args.fifo",
            value: "true",
            allowed: `false or omitted: ${fifoProblem(actual, true)}`,
            fix: "remove fifo; read a FIFO queue or an SNS FIFO topic when the consumer needs order",
        });
    }
}

function checkCode(args: OutboxConsumerArgs, problems: OutboxArgProblem[]): void {
    const consume: unknown = args.consume;
    const functionArn: unknown = args.functionArn;
    if (consume === undefined && functionArn === undefined) {
        problems.push({
            path: "args.consume",
            value: "undefined",
            allowed: "a function (message) => writes, or functionArn instead",
            fix: "pass consume (TypeScript, bundled into a function the component creates) or functionArn (an existing function, any language)",
        });
        return;
    }
    if (consume !== undefined && functionArn !== undefined) {
        problems.push({
            path: "args.functionArn",
            value: shown(functionArn),
            allowed: "nothing when consume is given: the consumer runs in one function",
            fix: "keep consume (the component creates the function) or functionArn (yours), not both",
        });
    }
    if (consume !== undefined && typeof consume !== "function") {
        problems.push({
            path: "args.consume",
            value: shown(consume),
            allowed: "a function (message) => writes (the writes that apply the message's effect, or nothing)",
            fix: "pass a function; from another language, pass functionArn instead",
        });
    }
    if (functionArn !== undefined && !isUnknown(functionArn)) {
        if (typeof functionArn !== "string" || !FUNCTION_ARN.test(functionArn)) {
            problems.push({
                path: "args.functionArn",
                value: show(functionArn),
                allowed:
                    "a Lambda function ARN, arn:aws:lambda:<region>:<account>:function:<name>[:<alias or version>]",
                fix: "pass the function's `arn` output (not its name)",
            });
        }
    }
    for (const [key, only, why] of [
        ["functionRoleName", "functionArn", "the created function's role gets the grant itself"],
        ["consumerName", "consume", "an existing function names its own inbox consumer"],
        ["memorySize", "consume", "an existing function keeps its own memory"],
    ] as const) {
        if (args[key] === undefined || args[only] !== undefined) continue;
        problems.push({
            path: `args.${key}`,
            value: shown(args[key]),
            allowed: `only with ${only} (${why})`,
            fix: `remove ${key}, or give ${only}`,
        });
    }
}

function checkNames(args: OutboxConsumerArgs, name: string, problems: OutboxArgProblem[]): void {
    if (!COMPONENT_NAME.test(name)) {
        problems.push({
            path: "name",
            value: show(name),
            allowed:
                '1 to 40 letters, digits, "-" or "_", starting with a letter or digit (child names and the default consumer name derive from it)',
            fix: 'rename the component, e.g. "billing"',
        });
    }
    const consumerName: unknown = args.consumerName;
    if (consumerName !== undefined && (typeof consumerName !== "string" || !CONSUMER_NAME.test(consumerName))) {
        problems.push({
            path: "args.consumerName",
            value: shown(consumerName),
            allowed:
                'a plain string of 1 to 128 letters, digits, "-", "_", "." or ":" (part of every inbox marker\'s key)',
            fix: 'pass e.g. "billing", or omit it for the component\'s name',
        });
    }
    for (const [key, pattern, what] of [
        ["inboxTableName", TABLE_NAME, 'an existing DynamoDB table\'s name: 3 to 255 letters, digits, "_", "-" or "."'],
        ["functionRoleName", ROLE_NAME, "an IAM role's name (not its ARN): 1 to 64 letters, digits or +=,.@_-"],
    ] as const) {
        const value: unknown = args[key];
        if (value === undefined || isUnknown(value)) continue;
        if (typeof value === "string" && pattern.test(value)) continue;
        problems.push({
            path: `args.${key}`,
            value: show(value),
            allowed: what,
            fix: `pass the ${key === "inboxTableName" ? "table's name" : "role's name"}`,
        });
    }
}

function checkFilter(args: OutboxConsumerArgs, problems: OutboxArgProblem[]): void {
    const filter: unknown = args.filter;
    if (filter === undefined) return;
    if (isUnknown(filter) || typeof filter !== "object" || filter === null || Array.isArray(filter)) {
        problems.push({
            path: "args.filter",
            value: shown(filter),
            allowed: "a plain object: an SNS filter policy for a topic, an EventBridge event pattern for a bus",
            fix: 'pass e.g. { "outbox.type": ["OrderPlaced"] } for a topic, or { "detail-type": ["OrderPlaced"] } for a bus',
        });
        return;
    }
    const kind =
        args.destinationKind ??
        (typeof args.destinationArn === "string" ? destinationKindOfArn(args.destinationArn) : undefined);
    if (kind === DESTINATION_KINDS.sqs) {
        problems.push({
            path: "args.filter",
            value: show(filter),
            allowed:
                "nothing with a queue destination: the outbox sends every event to the queue, and nothing stands between",
            fix: "remove filter, or publish to a topic or a bus and filter there",
        });
    }
}

function checkNumbers(args: OutboxConsumerArgs, fifo: boolean, problems: OutboxArgProblem[]): void {
    for (const key of Object.keys(CONSUMER_RANGES) as ConsumerRangedArg[])
        checkIntegerIn(`args.${key}`, args[key], CONSUMER_RANGES[key], problems);
    const window0: unknown = args.maximumBatchingWindowInSeconds;
    if (fifo && typeof window0 === "number" && window0 > 0) {
        problems.push({
            path: "args.maximumBatchingWindowInSeconds",
            value: show(window0),
            allowed: "0 or omitted on a FIFO queue (Lambda takes no batching window from a FIFO queue)",
            fix: "remove maximumBatchingWindowInSeconds",
        });
    }
    const batch: unknown = args.batchSize;
    if (typeof batch !== "number" || batch <= SMALL_BATCH_MAX || batch > CONSUMER_RANGES.batchSize.max) return;
    const window: unknown =
        args.maximumBatchingWindowInSeconds ?? CONSUMER_RANGES.maximumBatchingWindowInSeconds.fallback;
    if (fifo) {
        problems.push({
            path: "args.batchSize",
            value: show(batch),
            allowed: `1 to ${SMALL_BATCH_MAX} on a FIFO queue (Lambda's limit)`,
            fix: `set batchSize to ${SMALL_BATCH_MAX} or less`,
        });
    } else if (typeof window === "number" && window < 1) {
        problems.push({
            path: "args.batchSize",
            value: show(batch),
            allowed: `1 to ${SMALL_BATCH_MAX} without a batching window (Lambda's rule: above ${SMALL_BATCH_MAX} needs maximumBatchingWindowInSeconds of at least 1)`,
            fix: `set maximumBatchingWindowInSeconds to 1 or more, or batchSize to ${SMALL_BATCH_MAX} or less`,
        });
    }
}

/**
 * The problem with a `payloadBucketArn` value, or `undefined` when it is an S3 bucket ARN. Called at construction
 * for a plain value, and when an Output resolves at deployment.
 *
 * @param value - The arg's value.
 */
export function payloadBucketArnProblem(value: unknown): OutboxArgProblem | undefined {
    if (typeof value === "string" && S3_BUCKET_ARN.test(value)) return undefined;
    return {
        path: "args.payloadBucketArn",
        value: show(value),
        allowed: "an S3 bucket ARN, arn:aws:s3:::<bucket name> (the Outbox's payload bucket)",
        fix: "pass the bucket's ARN, arn:aws:s3:::<the Outbox's payloadBucketName> (not its name, and not an object's ARN), or omit it when the Outbox has no largePayloads",
    };
}

function checkPayloads(args: OutboxConsumerArgs, problems: OutboxArgProblem[]): void {
    const bucket: unknown = args.payloadBucketArn;
    const problem = bucket === undefined || isUnknown(bucket) ? undefined : payloadBucketArnProblem(bucket);
    if (problem !== undefined) problems.push(problem);
    const key: unknown = args.payloadKmsKeyArn;
    if (key === undefined) return;
    if (bucket === undefined) {
        problems.push({
            path: "args.payloadKmsKeyArn",
            value: shown(key),
            allowed: "only with payloadBucketArn (it is the payload bucket's key)",
            fix: "give payloadBucketArn too, or remove payloadKmsKeyArn",
        });
    } else if (!isUnknown(key) && (typeof key !== "string" || !KMS_KEY_ARN.test(key))) {
        problems.push({
            path: "args.payloadKmsKeyArn",
            value: show(key),
            allowed: "a KMS key ARN, arn:aws:kms:<region>:<account>:key/<key id> (not an alias)",
            fix: "pass the Outbox's kmsKeyArn, the key's `arn` output",
        });
    }
}

function checkPlain(args: OutboxConsumerArgs, problems: OutboxArgProblem[]): void {
    const alarms: unknown = args.alarms;
    if (alarms !== undefined && typeof alarms !== "boolean") {
        problems.push({
            path: "args.alarms",
            value: shown(alarms),
            allowed: "a plain boolean (it decides which resources the component declares)",
            fix: "pass true or false, or omit it for true",
        });
    }
}

/**
 * Every problem with `args` (and the component's `name`), in arg order; empty when they are valid.
 *
 * @param args - The component args.
 * @param name - The component's name.
 */
export function findConsumerArgProblems(args: OutboxConsumerArgs, name: string): OutboxArgProblem[] {
    const problems: OutboxArgProblem[] = [];
    if (args === null || typeof args !== "object") {
        problems.push({
            path: "args",
            value: show(args),
            allowed: "an object with destinationArn",
            fix: "pass { destinationArn, consume }",
        });
        return problems;
    }
    checkNames(args, name, problems);
    checkDestination(args, problems);
    checkCode(args, problems);
    checkFilter(args, problems);
    const fifo = args.fifo ?? (typeof args.destinationArn === "string" && args.destinationArn.endsWith(".fifo"));
    checkNumbers(args, fifo, problems);
    checkPayloads(args, problems);
    checkPlain(args, problems);
    return problems;
}

/**
 * The `INVALID_CONFIG` error listing `problems`, one line each: path, value, allowed, fix.
 *
 * @param name - The component's name.
 * @param problems - What is wrong.
 */
export function consumerArgsError(name: string, problems: readonly OutboxArgProblem[]): OutboxError {
    const lines = problems.map((p) => `  - ${p.path} is ${p.value}; allowed: ${p.allowed}; fix: ${p.fix}`);
    return new OutboxError(
        "INVALID_CONFIG",
        `OutboxConsumer "${name}" has ${problems.length} invalid arg${problems.length === 1 ? "" : "s"}:\n${lines.join("\n")}`,
        { context: { component: name, problems: problems.length, paths: problems.map((p) => p.path).join(",") } },
    );
}

/**
 * Throws an `INVALID_CONFIG` {@link OutboxError} listing every problem with `args`. Pure: declares nothing.
 *
 * @param args - The component args.
 * @param name - The component's name, quoted in the message.
 */
export function validateOutboxConsumerArgs(args: OutboxConsumerArgs, name: string): void {
    const problems = findConsumerArgProblems(args, name);
    if (problems.length > 0) throw consumerArgsError(name, problems);
}
