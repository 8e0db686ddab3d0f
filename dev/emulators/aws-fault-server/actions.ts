/**
 * The actions the server answers, by name, SNS's, SQS's and EventBridge's; any other is `InvalidAction`.
 *
 * @packageDocumentation
 */
import { randomUUID } from "node:crypto";
import { ApiError } from "./api-error";
import { describeEventBusAction, putEventsAction } from "./events-actions";
import type { ActionResult, ParsedCall } from "./request";
import { createTopicAction, publishAction, publishBatchAction } from "./sns-actions";
import {
    createQueueAction,
    deleteMessageAction,
    deleteMessageBatchAction,
    getQueueUrlAction,
    receiveMessageAction,
    sendMessageAction,
    sendMessageBatchAction,
} from "./sqs-actions";
import type { ServerState } from "./state";

/** Every action the server answers, as the `InvalidAction` message lists them. */
const SUPPORTED_ACTIONS =
    "CreateTopic, Publish, PublishBatch (SNS); CreateQueue, GetQueueUrl, SendMessage, SendMessageBatch, ReceiveMessage, DeleteMessage, DeleteMessageBatch (SQS); PutEvents, DescribeEventBus (EventBridge)";

/**
 * Run the call's action. `acknowledged` is false when the caller will never see the answer (an accept-then fault):
 * the messages are recorded so.
 *
 * @throws ApiError what SNS, SQS or EventBridge would answer the call with.
 */
export function execute(state: ServerState, call: ParsedCall, acknowledged: boolean): ActionResult {
    const requestId = randomUUID();
    switch (call.info.action) {
        case "CreateTopic":
            return createTopicAction(state, call, requestId);
        case "Publish":
            return publishAction(state, call, acknowledged, requestId);
        case "PublishBatch":
            return publishBatchAction(state, call, acknowledged, requestId);
        case "CreateQueue":
            return createQueueAction(state, call);
        case "GetQueueUrl":
            return getQueueUrlAction(state, call);
        case "SendMessage":
            return sendMessageAction(state, call, acknowledged);
        case "SendMessageBatch":
            return sendMessageBatchAction(state, call, acknowledged);
        case "ReceiveMessage":
            return receiveMessageAction(state, call);
        case "DeleteMessage":
            return deleteMessageAction(state, call);
        case "DeleteMessageBatch":
            return deleteMessageBatchAction(state, call);
        case "PutEvents":
            return putEventsAction(state, call, acknowledged);
        case "DescribeEventBus":
            return describeEventBusAction(state, call);
        default:
            throw new ApiError(
                "InvalidAction",
                400,
                `The action ${call.info.action} is not valid for this endpoint (the AWS fault server supports ${SUPPORTED_ACTIONS})`,
            );
    }
}
