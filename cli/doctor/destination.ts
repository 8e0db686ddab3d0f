/**
 * doctor's check of the outbox's destination: the topic, queue or event bus the outputs name exists and answers,
 * each asked with its own service's read call (SNS `GetTopicAttributes`, SQS `GetQueueAttributes`, EventBridge
 * `DescribeEventBus`). The kind comes from the ARN's shape (`destinationKindOfArn`).
 *
 * @packageDocumentation
 */
import { GetQueueAttributesCommand, type GetQueueAttributesCommandOutput } from "@aws-sdk/client-sqs";
import { queueUrlOfArn } from "../../runtime/destination/aws-resource-names";
import {
    DESTINATION_KINDS,
    DESTINATION_LABELS,
    DESTINATION_SETTINGS,
    destinationKindOfArn,
    type DestinationKind,
} from "../../runtime/destination/kind";
import type { SqsClientLike } from "../../runtime/writer/redrive";
import type { Checklist } from "../shared/checklist";
import { errorText } from "../shared/io";
import type { EventBridgePort, Port, SnsPort } from "./aws";

/** What each kind of destination is, the call doctor makes on it, its permission and its not-found errors. */
export const DESTINATION_CHECKS = {
    sns: {
        noun: "topic",
        call: "GetTopicAttributes",
        permission: "sns:GetTopicAttributes",
        notFound: ["NotFound", "NotFoundException"],
    },
    sqs: {
        noun: "queue",
        call: "GetQueueAttributes",
        permission: "sqs:GetQueueAttributes",
        notFound: ["QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue"],
    },
    eventbridge: {
        noun: "bus",
        call: "DescribeEventBus",
        permission: "events:DescribeEventBus",
        notFound: ["ResourceNotFoundException"],
    },
} as const satisfies Record<
    DestinationKind,
    { noun: string; call: string; permission: string; notFound: readonly string[] }
>;

/** The clients the destination check reads with. */
export interface DestinationClients {
    /** SNS, for a topic. */
    readonly sns: Port<SnsPort>;
    /** SQS, for a queue (the DLQ's client: its region and `--sqs-endpoint`). */
    readonly sqs: SqsClientLike;
    /** EventBridge, for a bus. */
    readonly eventBridge: Port<EventBridgePort>;
}

const ID = "destination";

/** `destination SNS topic exists`, `destination SQS queue exists`, `destination EventBridge bus exists`. */
export function destinationTitle(kind: DestinationKind | undefined): string {
    return kind === undefined
        ? "destination exists"
        : `destination ${DESTINATION_LABELS[kind]} ${DESTINATION_CHECKS[kind].noun} exists`;
}

/** The destination's read call; its answer says whether it is FIFO. Throws what the service throws. */
async function describe(kind: DestinationKind, arn: string, clients: DestinationClients): Promise<{ fifo: boolean }> {
    if (kind === DESTINATION_KINDS.sns) {
        if ("missing" in clients.sns) throw new MissingPort(clients.sns.missing);
        const topic = await clients.sns.port.getTopicAttributes({ TopicArn: arn });
        return { fifo: topic.Attributes?.FifoTopic === "true" };
    }
    if (kind === DESTINATION_KINDS.sqs) {
        const out = (await clients.sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: queueUrlOfArn(arn), AttributeNames: ["QueueArn", "FifoQueue"] }),
        )) as GetQueueAttributesCommandOutput;
        return { fifo: out.Attributes?.FifoQueue === "true" };
    }
    if ("missing" in clients.eventBridge) throw new MissingPort(clients.eventBridge.missing);
    await clients.eventBridge.port.describeEventBus({ Name: arn });
    return { fifo: false };
}

/** A port whose SDK package did not resolve. */
class MissingPort extends Error {
    constructor(readonly pkg: string) {
        super(pkg);
    }
}

/** The name an SDK error goes by: its `name`, or the service's `Code`. */
function errorName(err: unknown): string {
    const e = err as { name?: unknown; Code?: unknown; code?: unknown };
    return [e.name, e.Code, e.code].find((v): v is string => typeof v === "string") ?? "";
}

/**
 * The destination check: the topic, queue or bus `arn` names exists (its service's read call answers). Skipped
 * without an ARN (`--table` alone) or without the SDK package the kind needs; failed for an ARN of no destination
 * kind, a destination that does not exist, and a call that is refused, each with its fix.
 *
 * @param checks - The checklist.
 * @param clients - SNS, SQS and EventBridge.
 * @param arn - The outputs' `destinationArn`, or a 0.1 stack's `topicArn`.
 */
export async function checkDestination(
    checks: Checklist,
    clients: DestinationClients,
    arn: string | undefined,
): Promise<void> {
    if (arn === undefined)
        return checks.add(
            ID,
            destinationTitle(undefined),
            "skip",
            "no destination: pass --outputs with destinationArn (a stack of 0.1 has topicArn instead)",
        );
    const kind = destinationKindOfArn(arn);
    if (kind === undefined)
        return checks.add(
            ID,
            destinationTitle(undefined),
            "fail",
            `${arn} is not an SNS topic, SQS queue or EventBridge bus ARN; fix: write the outputs again with pulumi stack output --json (the Outbox's destinationArn)`,
        );
    const title = destinationTitle(kind);
    const { call, permission, notFound, noun } = DESTINATION_CHECKS[kind];
    try {
        const { fifo } = await describe(kind, arn, clients);
        return checks.add(ID, title, "pass", `${arn}${fifo ? " (FIFO)" : ""}`);
    } catch (err) {
        if (err instanceof MissingPort)
            return checks.add(ID, title, "skip", `needs ${err.pkg}: npm install ${err.pkg}`);
        if ((notFound as readonly string[]).includes(errorName(err)))
            return checks.add(
                ID,
                title,
                "fail",
                `${arn} does not exist: nothing the outbox publishes reaches a consumer; fix: ${notFoundFix(kind, noun)}`,
            );
        return checks.add(ID, title, "fail", `${call} failed: ${errorText(err)}; the tool needs ${permission}`);
    }
}

function notFoundFix(kind: DestinationKind, noun: string): string {
    const setting = DESTINATION_SETTINGS[kind];
    return kind === DESTINATION_KINDS.sns
        ? `pulumi up recreates a topic the Outbox created; a topic you gave (${setting}) must be created again, or ${setting} pointed at one that exists`
        : `create the ${noun} again, or point the Outbox's ${setting} at one that exists, then pulumi up`;
}
