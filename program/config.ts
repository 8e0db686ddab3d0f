/**
 * Stack configuration → {@link OutboxArgs} for the deployable program (`Pulumi.yaml` `main`). Every config key
 * is the arg of the same name; unset keys take the component's defaults. Types are checked by `pulumi.Config`
 * (a non-number for a number key fails with the key's name), ranges by the component's validation.
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import type { OutboxArgs } from "../components/args";
import { OUTBOX_RANGES, RangedArg } from "../components/defaults";

/** The config key holding the component's name, and its default. */
export const OUTBOX_NAME_KEY = "outboxName";

/** The default component name of the deployed outbox. */
export const DEFAULT_OUTBOX_NAME = "outbox";

/** String-valued config keys, each the arg of the same name. */
export const STRING_KEYS = [
    "billingMode",
    "importTableName",
    "kmsKeyArn",
    "topicArn",
    "queueArn",
    "eventBusArn",
    "eventSource",
    "destinationKmsKeyArn",
    "sweepSchedule",
    "logLevel",
] as const;

/** Boolean config keys, each the arg of the same name. */
export const BOOLEAN_KEYS = [
    "pointInTimeRecovery",
    "deletionProtection",
    "fifo",
    "checkEventBus",
    "alarms",
    "dashboard",
] as const;

/** Every config key the program reads. */
export function configKeys(): string[] {
    return [OUTBOX_NAME_KEY, ...STRING_KEYS, ...BOOLEAN_KEYS, ...Object.keys(OUTBOX_RANGES), "alarmActions", "tags"];
}

/** The outbox args from `config`; only the keys that are set. */
export function outboxArgsFromConfig(config: pulumi.Config): OutboxArgs {
    const args: Record<string, unknown> = {};
    for (const key of STRING_KEYS) args[key] = config.get(key);
    for (const key of BOOLEAN_KEYS) args[key] = config.getBoolean(key);
    for (const key of Object.keys(OUTBOX_RANGES) as RangedArg[]) args[key] = config.getNumber(key);
    args.alarmActions = config.getObject<string[]>("alarmActions");
    args.tags = config.getObject<Record<string, string>>("tags");
    return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined)) as OutboxArgs;
}
