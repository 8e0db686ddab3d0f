/**
 * The SNS actions: CreateTopic, Publish and PublishBatch (whose entries an entry fault rule can fail one by one,
 * into `Failed[]`). Each returns its XML answer and the call's outcome, or throws the {@link ApiError} SNS would
 * answer with.
 *
 * @packageDocumentation
 */
import { ApiError } from "./api-error";
import { failedEntryXml, publishedXml, queryTopicAttributes, xmlAnswer, xmlEscape } from "./aws-query";
import type { ActionResult, ParsedCall } from "./request";
import { acceptSns, checkPublishBatch, checkSnsEntry, checkTopicName } from "./sns-rules";
import { createTopic, type ServerState, type Topic } from "./state";
import type { EntryInfo } from "./types";

function topicOf(state: ServerState, call: ParsedCall): Topic {
    const arn = call.params.get("TopicArn");
    const topic = arn === null ? undefined : state.topics.get(arn);
    if (topic === undefined) throw new ApiError("NotFound", 404, "Topic does not exist");
    return topic;
}

/** CreateTopic, with the `FifoTopic` and `ContentBasedDeduplication` attributes. */
export function createTopicAction(state: ServerState, call: ParsedCall, requestId: string): ActionResult {
    const name = call.params.get("Name") ?? "";
    const attributes = queryTopicAttributes(call.params);
    checkTopicName(name, attributes);
    const arn = createTopic(state, name, attributes.ContentBasedDeduplication === "true");
    return { body: xmlAnswer("CreateTopic", `<TopicArn>${xmlEscape(arn)}</TopicArn>`, requestId), outcome: "ok" };
}

/** Publish. */
export function publishAction(
    state: ServerState,
    call: ParsedCall,
    acknowledged: boolean,
    requestId: string,
): ActionResult {
    const topic = topicOf(state, call);
    const entry = call.info.entries[0] as EntryInfo;
    checkSnsEntry(topic, entry);
    const out = acceptSns(state, topic, entry, call.info, acknowledged);
    return { body: xmlAnswer("Publish", publishedXml(out), requestId), outcome: "ok" };
}

/** PublishBatch: the batch's checks, then each entry accepted or failed by an entry fault rule. */
export function publishBatchAction(
    state: ServerState,
    call: ParsedCall,
    acknowledged: boolean,
    requestId: string,
): ActionResult {
    const topic = topicOf(state, call);
    const { info } = call;
    checkPublishBatch(topic, info.entries);
    const successful: string[] = [];
    const failed: string[] = [];
    for (const entry of info.entries) {
        const rule = state.faults.entryRule(entry, info);
        if (rule !== undefined) {
            failed.push(
                failedEntryXml(
                    entry.id ?? "",
                    rule.code ?? "InternalError",
                    rule.message ?? "injected failure",
                    rule.senderFault === true,
                ),
            );
            continue;
        }
        const out = acceptSns(state, topic, entry, info, acknowledged);
        successful.push(`<member><Id>${xmlEscape(entry.id ?? "")}</Id>${publishedXml(out)}</member>`);
    }
    return {
        body: xmlAnswer(
            "PublishBatch",
            `<Successful>${successful.join("")}</Successful><Failed>${failed.join("")}</Failed>`,
            requestId,
        ),
        outcome: failed.length === 0 ? "ok" : "partial",
    };
}
