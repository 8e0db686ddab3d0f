/**
 * The publisher's first step: the outbox records a stream event names, in shard order. The event must be a
 * DynamoDB stream event (`runtime/relay/stream-source.ts`); a record of another table's stream ends the walk there;
 * what is not an INSERT of an `OUTBOX#` item is ignored, and an image that cannot be decoded is set aside to be
 * logged.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../errors";
import type { Logger } from "../ports";
import { unmarshalRecord, type OutboxRecord, type StreamImage } from "../record/codec";
import { ATTR, originTaken, RECORD_SK_PREFIX, type OriginScope } from "../schema";
import { foreignEventProblem } from "../event-source";
import { DYNAMODB_STREAM, streamTableName } from "./stream-source";

/** An outbox INSERT of the event: its SequenceNumber, and the record its image holds. */
export interface Candidate {
    readonly sequenceNumber: string;
    readonly record: OutboxRecord;
}

interface StreamRecordShape {
    readonly eventName?: unknown;
    readonly eventSourceARN?: unknown;
    readonly dynamodb?: {
        readonly Keys?: StreamImage;
        readonly NewImage?: StreamImage;
        readonly SequenceNumber?: unknown;
    };
}

/** What the records of a stream event hold for the publisher. */
export interface EventCandidates {
    /** The outbox INSERTs, in shard order, up to the first record of another table's stream. */
    readonly candidates: Candidate[];
    /** Records ignored (not INSERTs of outbox items, or undecodable). */
    readonly ignored: number;
    /** Outbox INSERTs whose image cannot be decoded. */
    readonly undecodable: { sequenceNumber: string; error: unknown }[];
    /** The first record that does not come from the outbox table's stream; nothing after it is taken. */
    readonly misrouted?: { readonly sequenceNumber: string; readonly eventSourceARN: unknown };
}

/**
 * The outbox INSERTs of an event, in shard order, and how many records were ignored (with `origin`, also the
 * records of another region, see `originTaken` in schema.ts).
 *
 * @throws OutboxError `INVALID_CONFIG` when the event is not a DynamoDB stream event (see {@link foreignEventProblem}).
 */
export function candidatesOf(event: unknown, tableName: string, logger: Logger, origin?: OriginScope): EventCandidates {
    const problem = foreignEventProblem(event, DYNAMODB_STREAM)?.problem;
    if (problem !== undefined) {
        // Acknowledging it would hide a wiring fault (a mapping on a queue or another stream): fail the invocation.
        const error = new OutboxError(
            "INVALID_CONFIG",
            `publisher: ${problem}, so it is not a DynamoDB stream event of the outbox table ${tableName}; the function is wired to the wrong event source: point the function's event source mapping at the outbox table's stream`,
            { context: { table: tableName } },
        );
        logger.error(
            "publisher: the event is not a DynamoDB stream event of the outbox table; failing the invocation",
            { code: error.code, problem },
        );
        throw error;
    }
    const records = (event as { Records: StreamRecordShape[] }).Records;
    const candidates: Candidate[] = [];
    const undecodable: { sequenceNumber: string; error: unknown }[] = [];
    let ignored = 0;
    for (const raw of records) {
        const data = raw.dynamodb;
        if (streamTableName(raw.eventSourceARN) !== tableName) {
            // Another table's stream: its images are not our records, and completing the row of the same key in our
            // table would skip our own event. Nothing after it is taken; the shard holds at it.
            return {
                candidates,
                ignored,
                undecodable,
                misrouted: {
                    sequenceNumber: typeof data?.SequenceNumber === "string" ? data.SequenceNumber : "",
                    eventSourceARN: raw.eventSourceARN,
                },
            };
        }
        const sk = data?.Keys?.SK?.S;
        const sequenceNumber = data?.SequenceNumber;
        if (
            raw.eventName !== "INSERT" ||
            typeof sk !== "string" ||
            !sk.startsWith(RECORD_SK_PREFIX) ||
            typeof sequenceNumber !== "string" ||
            data?.NewImage === undefined
        ) {
            ignored += 1;
            continue;
        }
        if (!originTaken(origin, data.NewImage[ATTR.originRegion]?.S)) {
            // Another region's record (its relay delivers it), replicated here: a wider filter let it through.
            ignored += 1;
            continue;
        }
        try {
            candidates.push({ sequenceNumber, record: unmarshalRecord(data.NewImage) });
        } catch (error) {
            undecodable.push({ sequenceNumber, error });
            ignored += 1;
        }
    }
    return { candidates, ignored, undecodable };
}
