/**
 * The {@link Outbox} on a DynamoDB global table (`replicaRegions`): the home region (the component's provider's) and,
 * for each replica region, a provider of that region and a relay through it. Every region's relay takes its own
 * origin scope (`OriginScope`, `runtime/schema.ts`), so each record is published once, by the region that wrote it.
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import * as aws from "./aws";
import { OutboxError } from "../runtime/errors";
import { checkOriginScope } from "../runtime/record/origin";
import type { OriginScope } from "../runtime/schema";
import type { DestinationKind } from "../runtime/destination/kind";
import { childOptions, queueArgs } from "./children";
import { declarePublisher, declareSweeper, relayTargets, type OutboxParent } from "./handlers";
import { transformed } from "./transform";

/** What every region's relay publishes to and is granted on, besides its own region's replica and DLQ. */
export interface SharedTargets {
    /** The table: its name is every replica's, its `replicas` output holds each replica's ARN and stream. */
    readonly table: aws.dynamodb.Table;
    /** The destination's kind. */
    readonly destinationKind: DestinationKind;
    /** The destination's ARN, in the home region: every region publishes to it. */
    readonly destinationArn: pulumi.Output<string>;
}

/** One replica region's relay. */
export interface RegionRelay {
    /** The region. */
    readonly region: string;
    /** The provider its children are declared through, `<name>-<region>-provider`. */
    readonly provider: aws.Provider;
    /** Its DLQ. */
    readonly dlq: aws.sqs.Queue;
    /** Its publisher, mapped to the replica's stream. */
    readonly publisher: aws.lambda.CallbackFunction<any, any>;
    /** The mapping from the replica's stream to the publisher. */
    readonly mapping: aws.lambda.EventSourceMapping;
    /** Its sweeper. */
    readonly sweeper: aws.lambda.CallbackFunction<any, any>;
}

/**
 * An origin scope, checked as the relay checks it at a cold start (`checkOriginScope`), so a bad one fails the
 * deployment instead of every invocation.
 */
function originScope(
    region: pulumi.Input<string>,
    otherRegions: pulumi.Input<readonly string[]>,
    home: boolean,
): pulumi.Output<OriginScope> {
    return pulumi
        .all([region, otherRegions])
        .apply(([r, others]) => checkOriginScope("Outbox", { region: r, otherRegions: [...others], home })!);
}

/**
 * The home region's origin scope: the region of the component's provider (`aws:getRegion`, asked with the
 * component as parent, so through its provider), and the replicas as the other regions.
 *
 * @param o - The component.
 * @throws OutboxError `INVALID_CONFIG`, when the region resolves, if `replicaRegions` lists it.
 */
export function homeOrigin(o: OutboxParent): pulumi.Output<OriginScope> {
    const replicas = o.s.replicaRegions;
    const region = aws.getRegionOutput({}, { parent: o.parent }).region.apply((home) => {
        if (replicas.includes(home))
            throw new OutboxError(
                "INVALID_CONFIG",
                `Outbox "${o.name}": args.replicaRegions lists ${home}, the outbox's own region (its provider's, the home region, where the table is); allowed: the table's other regions; fix: remove ${home} from replicaRegions`,
                { context: { component: o.name, region: home } },
            );
        return home;
    });
    return originScope(region, replicas, true);
}

/** The replica of `table` in `region`: its ARN and its stream's, from the table's `replicas` output. */
function replicaOf(o: OutboxParent, table: aws.dynamodb.Table, region: string) {
    return table.replicas.apply((replicas) => {
        const replica = (replicas ?? []).find((r) => r.regionName === region);
        if (replica === undefined || !replica.arn || !replica.streamArn)
            throw new OutboxError(
                "INVALID_CONFIG",
                `Outbox "${o.name}": the table has no replica in ${region} with a stream (replicas: ${JSON.stringify((replicas ?? []).map((r) => r.regionName))}); a transform of the table must keep the replicas replicaRegions declares`,
                { context: { component: o.name, region } },
            );
        return { arn: replica.arn, streamArn: replica.streamArn };
    });
}

/**
 * Each replica region's relay: a provider of the region (a child of the component), and through it the DLQ, the
 * publisher mapped to the replica's stream with the region's filters, and the sweeper with its schedule. Named
 * `<name>-<region>-<suffix>`; each `transform` key applies to the regions' children as to the home region's. The
 * roles name the region's replica, stream, DLQ and log groups, and the shared destination.
 *
 * @param o - The component.
 * @param home - The home region's origin scope ({@link homeOrigin}).
 * @param shared - The table and the destination.
 */
export function declareReplicaRelays(
    o: OutboxParent,
    home: pulumi.Output<OriginScope>,
    shared: SharedTargets,
): RegionRelay[] {
    const { s } = o;
    return s.replicaRegions.map((region) => {
        const provider = new aws.Provider(`${o.name}-${region}-provider`, { region }, { parent: o.parent });
        const r: OutboxParent = { ...o, name: `${o.name}-${region}`, provider };
        const dlq = new aws.sqs.Queue(...transformed(r, "queue", queueArgs(s), childOptions(r)));
        const replica = replicaOf(o, shared.table, region);
        const origin = originScope(
            region,
            home.apply((h) => [h.region, ...s.replicaRegions.filter((other) => other !== region)]),
            false,
        );
        // No key: replicaRegions refuses kmsKeyArn (a key is regional).
        const targets = relayTargets(s, {
            tableName: shared.table.name,
            tableArn: replica.arn,
            streamArn: replica.streamArn,
            destinationKind: shared.destinationKind,
            destinationArn: shared.destinationArn,
            dlq,
            origin,
        });
        const { publisher, mapping } = declarePublisher(r, targets);
        const sweeper = declareSweeper(r, targets);
        return { region, provider, dlq, publisher, mapping, sweeper };
    });
}
