/**
 * The deployable program `Pulumi.yaml` names: `pulumi up` at the repository root deploys one {@link Outbox}
 * configured from the stack's config (keys in `program/config.ts`) and exports its outputs, so other stacks
 * can read them through a `StackReference`.
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import { Outbox } from "../components/outbox";
import { DEFAULT_OUTBOX_NAME, OUTBOX_NAME_KEY, outboxArgsFromConfig } from "./config";

const config = new pulumi.Config();
const outbox = new Outbox(config.get(OUTBOX_NAME_KEY) ?? DEFAULT_OUTBOX_NAME, outboxArgsFromConfig(config));

/** The outbox table's name (give it to `OutboxWriter`). */
export const tableName = outbox.tableName;
/** The outbox table's ARN. */
export const tableArn = outbox.tableArn;
/** The table's stream ARN. */
export const streamArn = outbox.streamArn;
/** The ARN of the destination events are published to: the topic, the queue or the bus (for `OutboxWriter`'s `address`). */
export const destinationArn = outbox.destinationArn;
/** The SNS topic events are published to; undefined when the destination is a queue or a bus. */
export const topicArn = outbox.topicArn;
/** The dead-letter queue's URL. */
export const dlqUrl = outbox.dlqUrl;
/** The dead-letter queue's ARN. */
export const dlqArn = outbox.dlqArn;
/** The publisher function's name. */
export const publisherFunctionName = outbox.publisherFunctionName;
/** The sweeper function's name. */
export const sweeperFunctionName = outbox.sweeperFunctionName;
/** The IAM policy (JSON) a role needs to write events with `OutboxWriter`; attach it in the application's stack. */
export const writerPolicy = outbox.writerPolicy;
