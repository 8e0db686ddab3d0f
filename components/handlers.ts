/**
 * The {@link Outbox}'s two functions and what each needs: the publisher with its role, log group and stream
 * mapping; the sweeper with its role, log group, schedule, invoke permission and target. Every child is declared
 * with `{ parent }`, the component, and named from the component's name.
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import * as aws from "./aws";
import { DESTINATION_LABELS, type DestinationKind } from "../runtime/destination/kind";
// The factories are called through the module object: an installed package's dist/runtime/relay/lambda.js is one
// bundled file (dev/build.mjs), and Pulumi captures a module under node_modules as a require of its path. A factory
// taken out of the bundle would instead be serialized with the bundle's inner modules, by value.
import * as relayLambda from "../runtime/relay/lambda";
import type { OutboxTransforms } from "./args";
import {
    LAMBDA_RUNTIME,
    childOptions,
    eventSourceMappingArgs,
    handlerEnvironment,
    logGroupArgs,
    withTags,
} from "./children";
import { handlerCodePathOptions } from "./code-path";
import { SYSTEM_LOG_LEVEL } from "./defaults";
import { GrantTargets, PolicyDocument, publisherPolicyDocument, sweeperPolicyDocument } from "./iam";
import type { OriginScope } from "../runtime/schema";
import type { OutboxSettings } from "./settings";
import { transformed } from "./transform";
import { declareVpcAwareFunction, vpcConfigOf } from "./vpc";

/** The EventBridge service principal allowed to invoke the sweeper. */
const EVENTS_PRINCIPAL = "events.amazonaws.com";

/** The component, its name, its settings and its `transform`: what every child declared here is made from. */
export interface OutboxParent {
    readonly parent: pulumi.Resource;
    readonly name: string;
    readonly s: OutboxSettings;
    readonly t: OutboxTransforms;
    /**
     * The provider of a replica region's children (`replicaRegions`, `components/replica-regions.ts`); undefined
     * for the home region's, which take the component's own.
     */
    readonly provider?: pulumi.ProviderResource;
}

/** The table, the destination and the DLQ, as the functions use them. */
export interface HandlerTargets {
    /** The stream the publisher reads: the table's, or in a replica region the replica's. */
    readonly streamArn: pulumi.Input<string>;
    /**
     * On a table with replicas (`replicaRegions`), the region's origin scope, which the stream mapping filters by
     * (`streamFilterPatterns(scope)`, `runtime/schema.ts`); undefined for a single-region outbox.
     */
    readonly origin?: pulumi.Output<OriginScope>;
    /** The destination's ARN: the created or given topic's, the given queue's or bus's. */
    readonly destinationArn: pulumi.Output<string>;
    readonly dlq: aws.sqs.Queue;
    /** Both functions' environment. */
    readonly environment: aws.lambda.CallbackFunctionArgs<any, any>["environment"];
    /** What both roles are granted on, but the stream and the log group. */
    readonly grants: Omit<{ [K in keyof GrantTargets]: pulumi.Input<GrantTargets[K]> }, "streamArn" | "logGroupArn">;
}

/** One region's table, stream, destination, DLQ and origin scope: what {@link relayTargets} builds the targets from. */
export interface RelayWhere {
    /** The table's name, the same in every region. */
    readonly tableName: pulumi.Input<string>;
    /** The table's ARN in this region: the table's, or the replica's. */
    readonly tableArn: pulumi.Input<string>;
    /** The stream in this region. */
    readonly streamArn: pulumi.Input<string>;
    /** The destination's kind. */
    readonly destinationKind: DestinationKind;
    /** The destination's ARN, in the home region. */
    readonly destinationArn: pulumi.Output<string>;
    /** This region's DLQ. */
    readonly dlq: aws.sqs.Queue;
    /** This region's origin scope, on a table with replicas. */
    readonly origin?: pulumi.Output<OriginScope>;
}

/**
 * The targets of one region's relay: its environment (`handlerEnvironment`, with the origin variables on a table
 * with replicas) and its grants (the table's or replica's ARN, the destination, the DLQ, the keys).
 *
 * @param s - The settings.
 * @param w - The region's table, stream, destination, DLQ and scope.
 */
export function relayTargets(s: OutboxSettings, w: RelayWhere): HandlerTargets {
    const destination = { destinationKind: w.destinationKind, destinationArn: w.destinationArn };
    const origin = w.origin !== undefined ? { origin: w.origin } : {};
    return {
        streamArn: w.streamArn,
        ...origin,
        destinationArn: w.destinationArn,
        dlq: w.dlq,
        environment: {
            variables: handlerEnvironment(s, { tableName: w.tableName, ...destination, dlqUrl: w.dlq.url, ...origin }),
        },
        grants: {
            tableArn: w.tableArn,
            ...destination,
            dlqArn: w.dlq.arn,
            kmsKeyArn: s.kmsKeyArn,
            destinationKmsKeyArn: s.destinationKmsKeyArn,
        },
    };
}

/** A function role whose only permissions are the inline policy `document` builds from the resolved targets. */
function declareRole(
    o: OutboxParent,
    child: "publisherRole" | "sweeperRole",
    targets: { [K in keyof GrantTargets]: pulumi.Input<GrantTargets[K]> },
    document: (targets: GrantTargets) => PolicyDocument,
): aws.iam.Role {
    // pulumi.output of an object resolves each Input it holds: the document gets the targets' plain values.
    const policy = pulumi.output(targets).apply((resolved) => JSON.stringify(document(resolved)));
    return new aws.iam.Role(
        ...transformed(
            o,
            child,
            {
                assumeRolePolicy: aws.iam.assumeRolePolicyForPrincipal(aws.iam.Principals.LambdaPrincipal),
                inlinePolicies: [{ name: "outbox", policy }],
                tags: withTags(o.s.tags),
            },
            childOptions(o),
        ),
    );
}

/** One of the two functions: the runtime's factory on nodejs22.x, its own role and log group, the handler environment. */
function declareFunction(
    o: OutboxParent,
    child: "publisher" | "sweeper",
    f: {
        callbackFactory: aws.lambda.CallbackFunctionArgs<any, any>["callbackFactory"];
        description: string;
        role: aws.iam.Role;
        logs: aws.cloudwatch.LogGroup;
        environment: aws.lambda.CallbackFunctionArgs<any, any>["environment"];
    },
): aws.lambda.CallbackFunction<any, any> {
    const { s } = o;
    const computed: aws.lambda.CallbackFunctionArgs<any, any> = {
        callbackFactory: f.callbackFactory,
        runtime: LAMBDA_RUNTIME,
        role: f.role,
        description: f.description,
        memorySize: s.memorySize,
        timeout: s.timeout,
        environment: f.environment,
        // JSON, so that Lambda sets AWS_LAMBDA_LOG_LEVEL from applicationLogLevel and the handlers honour it.
        loggingConfig: {
            logFormat: "JSON",
            applicationLogLevel: s.logLevel,
            systemLogLevel: SYSTEM_LOG_LEVEL,
            logGroup: f.logs.name,
        },
        // A fresh list per function: CallbackFunction appends to the one it is given.
        codePathOptions: handlerCodePathOptions(),
        tags: withTags(s.tags),
        ...vpcConfigOf(s),
    };
    return declareVpcAwareFunction(o, child, computed, f.role);
}

/** The publisher: its log group, role and function, and the mapping from the table's stream to it. */
export function declarePublisher(
    o: OutboxParent,
    targets: HandlerTargets,
): { publisher: aws.lambda.CallbackFunction<any, any>; mapping: aws.lambda.EventSourceMapping } {
    const { name, s } = o;
    const { streamArn, dlq } = targets;
    const logs = new aws.cloudwatch.LogGroup(...transformed(o, "publisherLogs", logGroupArgs(s), childOptions(o)));
    const publisher = declareFunction(o, "publisher", {
        callbackFactory: () => relayLambda.publisherLambdaFactory(),
        description: `Publishes the ${name} outbox's records from the table stream to ${DESTINATION_LABELS[s.destinationKind]}`,
        role: declareRole(
            o,
            "publisherRole",
            { ...targets.grants, streamArn, logGroupArn: logs.arn },
            publisherPolicyDocument,
        ),
        logs,
        environment: targets.environment,
    });
    const mapping = new aws.lambda.EventSourceMapping(
        ...transformed(
            o,
            "eventSourceMapping",
            eventSourceMappingArgs(s, {
                streamArn,
                functionArn: publisher.arn,
                dlqArn: dlq.arn,
                ...(targets.origin !== undefined ? { origin: targets.origin } : {}),
            }),
            // A changed starting position or stream replaces the mapping; created first, the new one would
            // collide with the old ("provided mapping already exists").
            { ...childOptions(o), deleteBeforeReplace: true },
        ),
    );
    return { publisher, mapping };
}

/** The sweeper: its log group, role and function, and the schedule that invokes it (rule, permission, target). */
export function declareSweeper(o: OutboxParent, targets: HandlerTargets): aws.lambda.CallbackFunction<any, any> {
    const { name, s } = o;
    const logs = new aws.cloudwatch.LogGroup(...transformed(o, "sweeperLogs", logGroupArgs(s), childOptions(o)));
    const sweeper = declareFunction(o, "sweeper", {
        callbackFactory: () => relayLambda.sweeperLambdaFactory(),
        description: `Publishes the ${name} outbox's records the stream path missed, and expires old ones`,
        role: declareRole(o, "sweeperRole", { ...targets.grants, logGroupArn: logs.arn }, sweeperPolicyDocument),
        logs,
        environment: targets.environment,
    });
    const schedule = new aws.cloudwatch.EventRule(
        ...transformed<aws.cloudwatch.EventRuleArgs, pulumi.CustomResourceOptions>(
            o,
            "schedule",
            {
                scheduleExpression: s.sweepSchedule,
                description: `Runs the ${name} outbox sweeper`,
                tags: withTags(s.tags),
            },
            childOptions(o),
        ),
    );
    new aws.lambda.Permission(
        ...transformed(
            o,
            "schedulePermission",
            {
                action: "lambda:InvokeFunction",
                function: sweeper.name,
                principal: EVENTS_PRINCIPAL,
                sourceArn: schedule.arn,
            },
            childOptions(o),
        ),
    );
    new aws.cloudwatch.EventTarget(
        ...transformed(o, "scheduleTarget", { rule: schedule.name, arn: sweeper.arn }, childOptions(o)),
    );
    return sweeper;
}
