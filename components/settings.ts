/**
 * {@link OutboxArgs} with every default applied: the one place the component reads its settings from.
 *
 * @packageDocumentation
 */
import type * as pulumi from "@pulumi/pulumi";
import { DEFAULT_EVENT_SOURCE, DESTINATION_KINDS, type DestinationKind } from "../runtime/destination/kind";
import type { OutboxArgs, OutboxBillingMode, OutboxLogLevel, OutboxTableIndex, OutboxVpc } from "./args";
import { ALARM_THRESHOLD_RANGES, AlarmThreshold, OUTBOX_DEFAULTS, OUTBOX_RANGES, RangedArg } from "./defaults";
import { destinationKindOfArgs } from "./destination";

/**
 * The component's effective settings: the args, defaults filled in. The Inputs stay Inputs (the children take them
 * as they are); the plain args are the ones the component's shape depends on.
 */
export type OutboxSettings = { readonly [K in RangedArg]: pulumi.Input<number> } & {
    readonly billingMode: OutboxBillingMode;
    readonly pointInTimeRecovery: pulumi.Input<boolean>;
    readonly deletionProtection: pulumi.Input<boolean>;
    readonly importTableName?: string;
    /** The replicas' regions (`replicaRegions`); empty for a single-region table. */
    readonly replicaRegions: readonly string[];
    readonly fifo: boolean;
    readonly sweepSchedule: pulumi.Input<string>;
    readonly logLevel: pulumi.Input<OutboxLogLevel>;
    readonly alarms: boolean;
    readonly alarmThresholds: { readonly [K in AlarmThreshold]: pulumi.Input<number> };
    readonly alarmActions: pulumi.Input<pulumi.Input<string>[]>;
    readonly dashboard: boolean;
    readonly kmsKeyArn?: pulumi.Input<string>;
    /** The destination's kind: by which of `topicArn`, `queueArn` and `eventBusArn` is given (`sns` with none). */
    readonly destinationKind: DestinationKind;
    /** The given destination's ARN (`topicArn`, `queueArn` or `eventBusArn`); undefined when a topic is created. */
    readonly destinationArn?: pulumi.Input<string>;
    /** The EventBridge `Source` (`eventSource`, default {@link DEFAULT_EVENT_SOURCE}); only with a bus. */
    readonly eventSource?: pulumi.Input<string>;
    /** Whether the functions check that the bus exists (`checkEventBus`, default true); only with a bus. */
    readonly checkEventBus?: pulumi.Input<boolean>;
    /** The CloudEvents `source` (`cloudEvents.source`), when the events are sent as CloudEvents. */
    readonly cloudEventsSource?: pulumi.Input<string>;
    /** The given destination's own key (`destinationKmsKeyArn`). */
    readonly destinationKmsKeyArn?: pulumi.Input<string>;
    readonly tags: pulumi.Input<Record<string, pulumi.Input<string>>>;
    /** The caller's own indexes, beside the outbox's (`globalSecondaryIndexes`). */
    readonly extraIndexes: readonly OutboxTableIndex[];
    /** The VPC both functions run in (`vpc`), if any. */
    readonly vpc?: OutboxVpc;
};

/** `args` with defaults from {@link OUTBOX_DEFAULTS} and {@link OUTBOX_RANGES}. Call after validation. */
export function resolveOutboxSettings(args: OutboxArgs): OutboxSettings {
    const ranged = {} as { [K in RangedArg]: pulumi.Input<number> };
    for (const key of Object.keys(OUTBOX_RANGES) as RangedArg[]) {
        ranged[key] = args[key] ?? OUTBOX_RANGES[key].fallback;
    }
    const thresholds = {} as { [K in AlarmThreshold]: pulumi.Input<number> };
    for (const key of Object.keys(ALARM_THRESHOLD_RANGES) as AlarmThreshold[]) {
        thresholds[key] = args.alarmThresholds?.[key] ?? ALARM_THRESHOLD_RANGES[key].fallback;
    }
    return {
        ...ranged,
        billingMode: args.billingMode ?? OUTBOX_DEFAULTS.billingMode,
        pointInTimeRecovery: args.pointInTimeRecovery ?? OUTBOX_DEFAULTS.pointInTimeRecovery,
        deletionProtection: args.deletionProtection ?? OUTBOX_DEFAULTS.deletionProtection,
        importTableName: args.importTableName,
        replicaRegions: args.replicaRegions ?? [],
        fifo: args.fifo ?? OUTBOX_DEFAULTS.fifo,
        sweepSchedule: args.sweepSchedule ?? OUTBOX_DEFAULTS.sweepSchedule,
        logLevel: args.logLevel ?? OUTBOX_DEFAULTS.logLevel,
        alarms: args.alarms ?? OUTBOX_DEFAULTS.alarms,
        alarmThresholds: thresholds,
        alarmActions: args.alarmActions ?? [],
        dashboard: args.dashboard ?? OUTBOX_DEFAULTS.dashboard,
        kmsKeyArn: args.kmsKeyArn,
        ...destinationSettings(args),
        tags: args.tags ?? {},
        extraIndexes: args.globalSecondaryIndexes ?? [],
        vpc: args.vpc,
    };
}

/** The destination part of the settings. */
function destinationSettings(
    args: OutboxArgs,
): Pick<
    OutboxSettings,
    | "destinationKind"
    | "destinationArn"
    | "eventSource"
    | "checkEventBus"
    | "cloudEventsSource"
    | "destinationKmsKeyArn"
> {
    const destinationKind = destinationKindOfArgs(args);
    return {
        destinationKind,
        destinationArn: args.queueArn ?? args.eventBusArn ?? args.topicArn,
        eventSource:
            destinationKind === DESTINATION_KINDS.eventBridge ? (args.eventSource ?? DEFAULT_EVENT_SOURCE) : undefined,
        checkEventBus:
            destinationKind === DESTINATION_KINDS.eventBridge
                ? (args.checkEventBus ?? OUTBOX_DEFAULTS.checkEventBus)
                : undefined,
        ...(args.cloudEvents !== undefined ? { cloudEventsSource: args.cloudEvents.source } : {}),
        destinationKmsKeyArn: args.destinationKmsKeyArn,
    };
}
