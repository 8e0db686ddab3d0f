/**
 * Validation of the plain values in {@link OutboxArgs}, before any resource is declared, in the user's terms:
 * the arg path, the bad value, what is allowed and the fix. Values that are still unknown (Outputs, promises)
 * are skipped where the arg takes an `Input`: they are checked by AWS at deployment, never guessed at here. Where
 * the arg must be plain, an unknown value is refused.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../runtime/errors";
import { SNS_TOPIC_ARN } from "../runtime/destination/aws-resource-names";
import type { OutboxArgProblem } from "./arg-problem";
import type { OutboxArgs } from "./args";
import { KMS_KEY_ARN, checkIntegerIn, checkPattern, isUnknown, listArg, notAnObjectProblem, show } from "./arg-checks";
import { checkDestinationArgs } from "./destination-validation";
import { checkPayloadArgs } from "./payload-validation";
import { checkExtraIndexes } from "./index-validation";
import { checkVpc } from "./vpc-validation";
import { checkReplicaRegions } from "./replica-validation";
import { TRANSFORM_KEYS, isPlainObject } from "./transform";
import {
    ALARM_THRESHOLD_RANGES,
    AlarmThreshold,
    BILLING_MODES,
    LOG_LEVELS,
    LOG_RETENTION_DAYS,
    OUTBOX_RANGES,
    RangedArg,
} from "./defaults";

export { TRANSFORM_KEYS } from "./transform";

const RATE_EXPRESSION = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;
const CRON_EXPRESSION = /^cron\(\S+( \S+){5}\)$/;

function checkRanges(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    for (const key of Object.keys(OUTBOX_RANGES) as RangedArg[])
        checkIntegerIn(`args.${key}`, (args as Record<RangedArg, unknown>)[key], OUTBOX_RANGES[key], problems);
}

function checkLogRetention(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    const days = args.logRetentionInDays;
    const inRange =
        typeof days === "number" &&
        Number.isInteger(days) &&
        days >= OUTBOX_RANGES.logRetentionInDays.min &&
        days <= OUTBOX_RANGES.logRetentionInDays.max;
    if (inRange && !(LOG_RETENTION_DAYS as readonly number[]).includes(days)) {
        const nearest = LOG_RETENTION_DAYS.find((d) => d >= days);
        problems.push({
            path: "args.logRetentionInDays",
            value: show(days),
            allowed: `one of CloudWatch's retention periods: ${LOG_RETENTION_DAYS.join(", ")}`,
            fix: `use ${nearest}, the next longer period`,
        });
    }
}

/**
 * Args needed while the program runs: each decides which children exist or how they are shaped, so an Output
 * there cannot be used. What each one allows instead.
 */
const PLAIN_ONLY = {
    billingMode: "a plain value: it decides whether the table and its indexes declare capacity",
    fifo: "a plain value: it shapes the topic and the publisher",
    importTableName: "a plain table name: it is the table's import resource option",
    replicaRegions: "a plain list of region names: each region's provider and relay are declared from it",
    alarms: "a plain value: it decides which resources the component declares",
    dashboard: "a plain value: it decides which resources the component declares",
    largePayloads: "a plain value: it decides whether the component declares a payload bucket",
    alarmThresholds: "a plain object (each threshold in it may be an Output)",
    transform: "a plain object (the values in each override may be Outputs)",
    globalSecondaryIndexes: "a plain list of plain objects: the indexes shape the table",
    vpc: "a plain object (each list in it may be an Output): it decides which grants the component declares",
    cloudEvents:
        "a plain object (its source may be an Output): it decides whether the functions are given OUTBOX_CLOUDEVENTS_SOURCE",
} as const satisfies Partial<Record<keyof OutboxArgs, string>>;

function checkPlainOnly(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    for (const key of Object.keys(PLAIN_ONLY) as (keyof typeof PLAIN_ONLY)[]) {
        if (!isUnknown(args[key])) continue;
        problems.push({
            path: `args.${key}`,
            value: "an Output (not known until deployment)",
            allowed: PLAIN_ONLY[key],
            fix: "pass a plain value, e.g. from config.get()/config.getBoolean()/config.getObject(), not another resource's output",
        });
    }
}

/** DynamoDB's table name rule. */
const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;

function checkImport(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    const name = checkPattern(
        args,
        "importTableName",
        TABLE_NAME,
        {
            allowed: 'an existing DynamoDB table\'s name: 3 to 255 letters, digits, "_", "-" or "."',
            fix: "pass the table's name (not its ARN), or omit importTableName to create a table",
        },
        problems,
    );
    if (name === undefined) return;
    const transform: unknown = args.transform;
    const table: unknown = isPlainObject(transform) ? transform.table : undefined;
    const override: unknown = isPlainObject(table) ? table.name : undefined;
    if (override !== undefined && !isUnknown(override) && override !== name) {
        problems.push({
            path: "args.transform.table.name",
            value: show(override),
            allowed: `nothing, or the imported table's name ${show(name)} (importTableName names the table)`,
            fix: "remove name from transform.table",
        });
    }
}

function checkBooleans(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    for (const key of [
        "pointInTimeRecovery",
        "deletionProtection",
        "fifo",
        "alarms",
        "dashboard",
        "checkEventBus",
    ] as const) {
        const value: unknown = args[key];
        if (value === undefined || typeof value === "boolean" || isUnknown(value)) continue;
        problems.push({
            path: `args.${key}`,
            value: show(value),
            allowed: "true or false",
            fix: "pass a boolean (not a string)",
        });
    }
}

function checkBilling(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    const mode: unknown = args.billingMode;
    if (mode !== undefined && !isUnknown(mode) && !(BILLING_MODES as readonly unknown[]).includes(mode)) {
        problems.push({
            path: "args.billingMode",
            value: show(mode),
            allowed: BILLING_MODES.map((m) => `"${m}"`).join(" or "),
            fix: `use one of those (upper case), or omit it for "PAY_PER_REQUEST"`,
        });
    }
    if (args.provisionedCapacity !== undefined && mode !== "PROVISIONED") {
        problems.push({
            path: "args.provisionedCapacity",
            value: show(args.provisionedCapacity),
            allowed: `only with billingMode "PROVISIONED" (billingMode is ${show(mode ?? "PAY_PER_REQUEST")})`,
            fix: `remove provisionedCapacity, or set billingMode: "PROVISIONED"`,
        });
    }
}

function checkLogLevel(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    const level: unknown = args.logLevel;
    if (level === undefined || isUnknown(level) || (LOG_LEVELS as readonly unknown[]).includes(level)) return;
    problems.push({
        path: "args.logLevel",
        value: show(level),
        allowed: LOG_LEVELS.map((l) => `"${l}"`).join(", "),
        fix: `use one of those (upper case, as Lambda's applicationLogLevel), or omit it for "INFO"`,
    });
}

function checkSchedule(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    const schedule: unknown = args.sweepSchedule;
    if (schedule === undefined || isUnknown(schedule)) return;
    const rate = typeof schedule === "string" ? RATE_EXPRESSION.exec(schedule) : null;
    const validRate = rate !== null && Number(rate[1]) >= 1 && (Number(rate[1]) === 1) === !rate[2].endsWith("s");
    const validCron = typeof schedule === "string" && CRON_EXPRESSION.test(schedule);
    if (!validRate && !validCron) {
        problems.push({
            path: "args.sweepSchedule",
            value: show(schedule),
            allowed: `an EventBridge schedule: "rate(1 minute)", "rate(N minutes|hours|days)" with N > 1, or "cron(m h dom mon dow y)"`,
            fix: `e.g. "rate(5 minutes)"; a unit of 1 is singular ("rate(1 hour)"), any other is plural`,
        });
    }
}

function checkKmsKey(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    checkPattern(
        args,
        "kmsKeyArn",
        KMS_KEY_ARN,
        {
            allowed: "a KMS key ARN, arn:aws:kms:<region>:<account>:key/<key-id>",
            fix: "pass the key's `arn` output; DynamoDB needs the key ARN, not a key id or an alias",
        },
        problems,
    );
}

function checkAlarmThresholds(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    const thresholds: unknown = args.alarmThresholds;
    if (thresholds === undefined || isUnknown(thresholds)) return;
    const keys = Object.keys(ALARM_THRESHOLD_RANGES) as AlarmThreshold[];
    if (typeof thresholds !== "object" || thresholds === null || Array.isArray(thresholds)) {
        problems.push(notAnObjectProblem("args.alarmThresholds", thresholds, keys, "the thresholds you change"));
        return;
    }
    for (const key of Object.keys(thresholds)) {
        const value = (thresholds as Record<string, unknown>)[key];
        if (!(keys as string[]).includes(key)) {
            problems.push({
                path: `args.alarmThresholds.${key}`,
                value: show(value),
                allowed: `one of the keys ${keys.join(", ")}`,
                fix: "rename it to the threshold you mean, or remove it",
            });
            continue;
        }
        checkIntegerIn(`args.alarmThresholds.${key}`, value, ALARM_THRESHOLD_RANGES[key as AlarmThreshold], problems);
    }
}

function checkAlarmActions(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    const actions = listArg(
        args,
        "alarmActions",
        { allowed: "a list of SNS topic ARNs", fix: "pass e.g. [oncall.arn], or omit it" },
        problems,
    );
    actions?.forEach((arn: unknown, i) => {
        if (isUnknown(arn) || (typeof arn === "string" && SNS_TOPIC_ARN.test(arn))) return;
        problems.push({
            path: `args.alarmActions[${i}]`,
            value: show(arn),
            allowed: "an SNS topic ARN, arn:aws:sns:<region>:<account>:<name>",
            fix: "pass the on-call topic's `arn` output (not its name or URL)",
        });
    });
}

/** What each `transform` key takes, as the messages say it. */
const TRANSFORM_VALUE =
    "an object of the child's args (deep-merged over the component's) or a function (args, opts, name) => void";

function checkTransform(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    const transform: unknown = args.transform;
    if (transform === undefined || isUnknown(transform)) return;
    if (!isPlainObject(transform)) {
        problems.push(notAnObjectProblem("args.transform", transform, TRANSFORM_KEYS, "the keys you need"));
        return;
    }
    const table = transform.table;
    const streamEnabled: unknown = isPlainObject(table) ? table.streamEnabled : undefined;
    if (streamEnabled !== undefined && !isUnknown(streamEnabled) && streamEnabled !== true) {
        problems.push({
            path: "args.transform.table.streamEnabled",
            value: show(streamEnabled),
            allowed: "true (the publisher and its mapping read the table's stream)",
            fix: "remove streamEnabled from transform.table",
        });
    }
    for (const [key, value] of Object.entries(transform)) {
        if (!(TRANSFORM_KEYS as readonly string[]).includes(key)) {
            problems.push({
                path: `args.transform.${key}`,
                value: show(value),
                allowed: `one of the keys ${TRANSFORM_KEYS.join(", ")}`,
                fix: "rename it to the child resource you mean, or remove it",
            });
        } else if (value !== undefined && !isPlainObject(value) && typeof value !== "function") {
            problems.push({
                path: `args.transform.${key}`,
                value: isUnknown(value)
                    ? "an Output (not known until deployment)"
                    : `${show(value)} (${Array.isArray(value) ? "an array" : value === null ? "null" : `a ${typeof value}`})`,
                allowed: TRANSFORM_VALUE,
                fix: `pass { ...the args to change } or (args, opts, name) => { ... }; an Output is refused: the merge happens while the program runs`,
            });
        }
    }
}

/**
 * The longest component name: auto-named children append up to 22 characters (`-publisher-role-` and Pulumi's
 * 7-character suffix), and AWS caps Lambda function and IAM role names at 64.
 */
export const OUTBOX_NAME_MAX_LENGTH = 40;

const OUTBOX_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

function checkName(name: string | undefined, problems: OutboxArgProblem[]): void {
    if (name === undefined) return;
    if (!OUTBOX_NAME.test(name) || name.length > OUTBOX_NAME_MAX_LENGTH) {
        problems.push({
            path: "name",
            value: show(name),
            allowed: `1 to ${OUTBOX_NAME_MAX_LENGTH} letters, digits, "-" or "_", starting with a letter or digit (child names, log group names and AWS's 64-character function and role names derive from it)`,
            fix: 'rename the component, e.g. "orders"',
        });
    }
}

function checkTags(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    const tags: unknown = args.tags;
    if (tags === undefined || isUnknown(tags)) return;
    const valid =
        typeof tags === "object" &&
        tags !== null &&
        !Array.isArray(tags) &&
        Object.values(tags).every((v) => typeof v === "string" || isUnknown(v));
    if (!valid) {
        problems.push({
            path: "args.tags",
            value: show(tags),
            allowed: "an object of string values",
            fix: 'pass e.g. { team: "payments" }; convert numbers and booleans to strings',
        });
    }
}

/**
 * Every problem with the plain values of `args` (and with the component's `name`, when given), in arg order.
 * Empty when they are valid.
 */
export function findOutboxArgProblems(args: OutboxArgs, name?: string): OutboxArgProblem[] {
    const problems: OutboxArgProblem[] = [];
    checkName(name, problems);
    checkPlainOnly(args, problems);
    checkBilling(args, problems);
    checkImport(args, problems);
    checkReplicaRegions(args, name, problems);
    checkBooleans(args, problems);
    checkKmsKey(args, problems);
    checkDestinationArgs(args, problems);
    checkRanges(args, problems);
    checkLogRetention(args, problems);
    checkSchedule(args, problems);
    checkLogLevel(args, problems);
    checkAlarmThresholds(args, problems);
    checkAlarmActions(args, problems);
    checkTags(args, problems);
    checkTransform(args, problems);
    checkExtraIndexes(args, problems);
    checkVpc(args, problems);
    checkPayloadArgs(args, name, problems);
    return problems;
}

/**
 * Throws an `INVALID_CONFIG` {@link OutboxError} listing every problem with the plain values of `args`
 * (one line each: path, value, allowed, fix). Pure: declares nothing, reads nothing but `args`.
 *
 * @param args - the component args.
 * @param name - the component's name, quoted in the message.
 */
export function validateOutboxArgs(args: OutboxArgs, name = "outbox"): void {
    const problems = findOutboxArgProblems(args, name);
    if (problems.length === 0) return;
    const lines = problems.map((p) => `  - ${p.path} is ${p.value}; allowed: ${p.allowed}; fix: ${p.fix}`);
    throw new OutboxError(
        "INVALID_CONFIG",
        `Outbox "${name}" has ${problems.length} invalid arg${problems.length === 1 ? "" : "s"}:\n${lines.join("\n")}`,
        {
            context: { component: name, problems: problems.length, paths: problems.map((p) => p.path).join(",") },
        },
    );
}
