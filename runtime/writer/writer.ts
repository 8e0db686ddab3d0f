/**
 * The application side of the outbox: write your own items and the events they imply in ONE DynamoDB
 * transaction, so a committed change always has its events waiting and a failed one has none.
 *
 * @packageDocumentation
 */
import {
    TransactWriteItemsCommand,
    UpdateItemCommand,
    type ConsumedCapacity,
    type DynamoDBClient,
    type ReturnConsumedCapacity,
    type TransactWriteItem,
    type TransactWriteItemsCommandInput,
    type UpdateItemCommandInput,
} from "@aws-sdk/client-dynamodb";
import { DESTINATION_KINDS, destinationKindOfArn } from "../destination/kind";
import { OutboxError } from "../errors";
import { wrapAwsError } from "../store/aws-errors";
import { idGuardFree, placeholders, skAbsent } from "../store/expressions";
import { raiseExpiryShards } from "../store/expiry-shards-row";
import { allocateSeqRange } from "../store/seq-allocation";
import { checkWriterClock } from "../store/writer-clock";
import { integerIn } from "../integer-setting";
import { describeValue } from "../record/transact-items";
import {
    checkAttributeValueItems,
    marshallDocumentItems,
    type DocumentTransactWriteItem,
} from "../record/document-items";
import { HANDLER_LIMITS, WRITER_LIMITS } from "../limits";
import { createIdGenerator, type IdGenerator } from "../ids";
import { MAX_SORT_KEY_BYTES, utf8Length } from "../record/item-size";
import { activeTraceWithin } from "./message-trace";
import { loadOpenTelemetryApi } from "../observability/open-telemetry";
import {
    envelopeHeaders,
    needsIdGuard,
    prepareMessage,
    type MessageRules,
    type OutboxMessage,
    type PreparedMessage,
} from "./outbox-message";
import { invalidPayload as invalid } from "../record/payload-error";
import { silentLogger, systemClock, type Clock, type Logger } from "../ports";
import { marshalRecord, pendingRecord, type AttributeMap } from "../record/codec";
import { writerOriginRegion } from "./origin-region";
import { keyHomingCheck, type HomingCheck, type KeyHoming } from "./key-homing";
import { fenceTtlSeconds } from "../record/fence";
import { recordSortKey } from "../record/keys";
import { idGuardItem } from "../record/id-guard";
import { checkActionCount, checkSizes } from "./transaction-size";
import { cancellationError, describeFailedAction, type FailedAction } from "./transaction-failure";
import { claimCheckPlan, putPayloads, type LargePayloadOptions } from "../claim-check/offload";
import {
    payloadRefusal,
    typedEventRules,
    type EventMap,
    type EventSchemaVersions,
    type EventValidators,
    type IsUntyped,
    type TypedEvent,
    type TypedEventRules,
    type UntypedEvents,
    type UnvalidatedTypes,
} from "../record/typed-events";

// What a message may hold, and who a failed action belongs to, live in modules of their own; the writer's module
// still exports them, as it always has.
export type { OutboxMessage } from "./outbox-message";
export { MAX_PAYLOAD_DEPTH } from "./payload-json";
export type { FailedAction } from "./transaction-failure";
export type { KeyHoming } from "./key-homing";

/**
 * One message of a writer typed by the event map `M`: a union over its types, each `type` with its own `payload`
 * type. For the untyped map (the default) it is {@link OutboxMessage} itself.
 */
export type WriterMessage<M extends EventMap = UntypedEvents> =
    IsUntyped<M> extends true ? OutboxMessage : TypedEvent<M, OutboxMessage>;

/** One call of {@link OutboxWriter.write}; `M` is the writer's event map. */
export interface WriteRequest<M extends EventMap = UntypedEvents> {
    /** The events. Each becomes one outbox record in the transaction. */
    readonly messages: readonly WriterMessage<M>[];
    /**
     * Your own Put/Update/Delete/ConditionCheck actions, in SDK `TransactWriteItem` form (each names its table).
     * They come first in the transaction, messages after.
     * @default []
     */
    readonly items?: readonly TransactWriteItem[];
    /**
     * Your own actions in the DocumentClient's shape: native values, as `@aws-sdk/lib-dynamodb`'s
     * `TransactWriteCommand` takes them, and as ElectroDB's and dynamodb-toolbox's `params()` return them. They are
     * marshalled exactly as that command marshalls by default (`@aws-sdk/util-dynamodb`), up front, and go after
     * `items`, before the messages. A separate field, because an AttributeValue map cannot be told apart from a
     * native one safely: a native attribute `{ S: "x" }` is a valid map.
     * @default []
     */
    readonly documentItems?: readonly DocumentTransactWriteItem[];
    /**
     * Makes the transaction idempotent for 10 minutes: a retry with the same token and the same request is not
     * applied twice. Pass explicit message `id`s with it, so the retried request is identical.
     * @default undefined
     */
    readonly clientRequestToken?: string;
    /** Ask DynamoDB for the write units consumed (returned in {@link WriteResult.consumedCapacity}). @default "NONE" */
    readonly returnConsumedCapacity?: ReturnConsumedCapacity;
}

/** What {@link OutboxWriter.write} returns. */
export interface WriteResult {
    /** The message ids, in request order. */
    readonly messageIds: string[];
    /** Capacity consumed by the sequence allocations (keyed messages) and the transaction, when requested. */
    readonly consumedCapacity: ConsumedCapacity[];
}

/** A validated write, ready to send: see {@link OutboxWriter.prepare}. */
export interface PreparedWrite {
    /** The message ids, in request order. */
    readonly messageIds: readonly string[];
    /**
     * The exact TransactWriteItems input: your items first, then one conditional Put per message, then one
     * conditional id guard Put per message whose id the writer did not generate.
     */
    readonly input: TransactWriteItemsCommandInput;
    /** Capacity consumed by the keyed messages' sequence allocations, when requested. */
    readonly allocationCapacity: readonly ConsumedCapacity[];
    /** Names the caller's item or message behind a transaction action index, for error messages. */
    readonly describe: (actionIndex: number) => FailedAction;
}

/** Options for {@link OutboxWriter}; `M` is its event map (type → payload type). */
export interface OutboxWriterOptions<M extends EventMap = UntypedEvents> {
    /** The DynamoDB client (same account and region as the outbox table). */
    readonly client: DynamoDBClient;
    /** The outbox table's name. */
    readonly tableName: string;
    /**
     * The clock for `created_at` and the FENCE row's ttl. A keyed message's `created_at` is never earlier than
     * the latest one already handed out in its partition (see {@link OutboxWriter}). @default systemClock
     */
    readonly clock?: Clock;
    /** Where the writer warns that its clock is behind a partition's last `created_at` (ids and counts only). @default silentLogger */
    readonly logger?: Logger;
    /**
     * Generates message ids when a message has none. The writer cannot know that an injected generator's ids are
     * unique, so each of its ids gets an id guard, as a caller-supplied id does.
     * @default a ULID generator on `clock` (80 random bits per millisecond; its ids need no guard)
     */
    readonly idGenerator?: IdGenerator;
    /**
     * The record's binding id (the destination's name; part of the sort key).
     * @default the kind of destination `address` names (`"sns"`, `"sqs"` or `"eventbridge"`), else `"sns"`
     */
    readonly bindingId?: string;
    /**
     * The record's egress address: the destination's ARN (the `Outbox` component's `destinationArn` output). The
     * publisher publishes to its own destination whatever the record says; the writer reads the kind the address
     * names for the default `bindingId` and, for a FIFO topic or queue (a name ending in `.fifo`), checks the
     * partitions and ordering keys against the FIFO `MessageGroupId` rules (see `fifo`) before anything is
     * written. @default ""
     */
    readonly address?: string;
    /**
     * Grace the FENCE row's ttl is at least as long as (it is max(grace, 30 days)); an id guard holds its id for
     * as long after the later of the record's creation and expiry. Whole seconds from 0 to 31536000 (a year).
     * @default 3600
     */
    readonly compactionGraceSeconds?: number;
    /**
     * Check partitions and ordering keys against the FIFO `MessageGroupId` rules of SNS and SQS (1–128 letters,
     * digits and ASCII punctuation, without spaces), because the publisher sends them as group ids to a FIFO topic
     * or queue. `false` with a FIFO `address` is refused (`INVALID_CONFIG`): the destination would refuse such a
     * message, and it would only reach the DLQ.
     * @default true when `address` is a FIFO topic or queue (an SNS topic or SQS queue ARN ending in `.fifo`), else false
     */
    readonly fifo?: boolean;
    /**
     * ExpiryIndex partition key values expiring messages are spread over, 1 to 64. 1 writes `has_expiry = "1"`, as
     * GoBridge does, and caps the table near 500 expiring messages per second (one key value's write ceiling, two
     * writes per message). N > 1 writes `"1#0"` … `"1#<N-1>"`, chosen from the message id; the writer first raises
     * the table's expiry shards mark (one conditional UpdateItem per writer instance) so the sweeper reads every
     * shard. A GoBridge drainer's Expire queries `"1"` only: see docs/scale.md.
     * @default 1
     */
    readonly expiryShards?: number;
    /**
     * Where a message without a `traceparent` takes its trace context from: `"active"`, the active OpenTelemetry
     * span when `@opentelemetry/api` (an optional peer) is installed, and none without it; `"none"`, nowhere. A
     * message's own `traceparent` always wins. The active context is left out (with a warning on `logger`) of a
     * message whose headers leave no attribute for it; a `traceparent` the message gives is refused instead.
     * @default "active"
     */
    readonly traceContext?: "active" | "none";
    /**
     * Store payloads too large to travel inline in S3, and write their records with a pointer (a claim check):
     * see docs/runtime.md, "Large payloads". Needs `@aws-sdk/client-s3` (its `S3` client) in the application.
     * @default undefined (every payload inline; one past the limits is refused)
     */
    readonly largePayloads?: LargePayloadOptions;
    /**
     * A Standard Schema validator per event type (a zod, valibot or arktype schema, or any object with a
     * `~standard.validate`; it may be asynchronous). {@link OutboxWriter.write} and {@link OutboxWriter.prepare}
     * refuse a message whose payload fails its type's validator with `INVALID_PAYLOAD` naming the message, the
     * type and the path, before anything is written or stored. The validator only judges: the payload
     * written is the one given. {@link OutboxWriter.check} runs no validator (it does no asynchronous work).
     * @default undefined (no payload validated)
     */
    readonly validators?: EventValidators<M>;
    /**
     * What happens to a message whose type has no entry in `validators`: `"accept"` writes it unvalidated, so
     * validators can be added one type at a time and the event map stays the compile-time check of types;
     * `"refuse"` refuses it with `INVALID_PAYLOAD`, for a writer whose every event must be validated. Only with
     * `validators`.
     * @default "accept"
     */
    readonly unvalidatedTypes?: UnvalidatedTypes;
    /**
     * The schema version of each type's messages that give no `schemaVersion` of their own (see
     * {@link OutboxMessage.schemaVersion}), e.g. `{ OrderPlaced: "2" }`.
     * @default {} (no version unless the message gives one)
     */
    readonly schemaVersions?: EventSchemaVersions<M>;
    /**
     * The region stamped on every record as its origin (`origin_region`): on a global table, the region whose relay
     * delivers it. See docs/runtime.md, "Global tables".
     * @default the `AWS_REGION` environment variable; no stamp when that is unset too
     */
    readonly region?: string;
    /**
     * Declare the table a global table: then a region (`region` or `AWS_REGION`) is required, and its absence is an
     * `INVALID_CONFIG` error at construction instead of unstamped records.
     * @default false
     */
    readonly globalTable?: boolean;
    /**
     * Home each partition in one region, for keys that need one order across the regions of a global table: a keyed
     * message (one with an `orderingKey`) whose partition's home (`homeOf`) is not this writer's `region` is
     * refused, with nothing written, or written with a warning on `logger` (`onForeignWrite`). Keyless messages are
     * never homed. Needs the writer's region (`region` or `AWS_REGION`), which must be one of `regions`. See
     * docs/runtime.md, "Global tables".
     * @default undefined (any partition is written from any region)
     */
    readonly keyHoming?: KeyHoming;
}

/** A keyless record's seq is `created_at * SEQ_PER_MS + n`: see {@link OutboxWriter}. */
const SEQ_PER_MS = 1_000_000n;

/**
 * Writes the caller's items and outbox records in one `TransactWriteItems`.
 *
 * Sequence numbers (`seq`, and so `claim_sort`): GoBridge allocates them from the partition's FENCE row
 * (`ADD seq_counter`). A message with an ordering key does the same (one small UpdateItem per partition per
 * call, before the transaction), because its key's strict order is `(created_at, seq)`. A keyless message costs
 * no write beyond the transaction: its seq is `created_at × 10^6 + n`, with n counting this writer's messages
 * within the millisecond. That is correct for the store because (1) `seq` only has to be monotonic per
 * partition with gaps allowed, and ordering is `(created_at, seq)`, so seq only breaks ties inside one
 * millisecond; (2) only records sharing an ordering key have an order contract, and keyless records share
 * none; (3) nothing compares a record's seq with `seq_counter`. Keyless records stay oldest-first, best effort,
 * as they are with GoBridge under index lag.
 *
 * Creation time (`created_at`): this writer's clock, except that a keyed message never gets an earlier one than
 * its partition's FENCE row says was last handed out (`last_created_at`). When this clock is behind that (another
 * writer's clock runs ahead), the allocation takes a second UpdateItem and the records carry the fence's time,
 * with a warning on `logger` past one second. So `(created_at, seq)` order is allocation order whatever the
 * clocks say: a write that starts after another committed is published after it.
 *
 * @typeParam M - The event map (type → payload type) `write` checks each message's `type` and `payload` against, at
 *   compile time; `validators` check them at run time. @default UntypedEvents (any type, any payload)
 *
 * @example
 * const writer = new OutboxWriter({ client, tableName: "orders-outbox" });
 * await writer.write({
 *   items: [{ Put: { TableName: "orders", Item: { PK: { S: "ORDER#1001" }, SK: { S: "META" }, total: { N: "42" } } } }],
 *   messages: [{ partition: "ORDER#1001", type: "OrderCreated", payload: { orderId: 1001, total: 42 } }],
 * });
 */
export class OutboxWriter<M extends EventMap = UntypedEvents> {
    private readonly client: DynamoDBClient;
    private readonly typed: TypedEventRules;
    private readonly tableName: string;
    private readonly clock: Clock;
    private readonly logger: Logger;
    private readonly rules: MessageRules;
    private readonly bindingId: string;
    private readonly address: string;
    private readonly graceSeconds: number;
    private readonly expiryShards: number;
    private readonly originRegion: string | undefined;
    private readonly homing: HomingCheck | undefined;
    private expiryShardsRaised: boolean;
    private lastMs: number;
    private inMs: bigint;

    /**
     * @param options - The client, the table and the optional seams.
     * @throws OutboxError `INVALID_CONFIG` when the table name or the client is missing, `expiryShards` is not an integer
     *   from 1 to 64, `compactionGraceSeconds` not one from 0 to 31536000 (a year), `bindingId` not a string short
     *   enough for a sort key, `traceContext` not `"active"` or `"none"`, `fifo` is `false` with a FIFO `address`,
     *   `region` (or `AWS_REGION`) is not a region name, `globalTable` is true with no region known, `keyHoming` is
     *   malformed, lacks the writer's region, or says `"warn"` without a `logger`, or `@opentelemetry/api` is
     *   installed but cannot be loaded.
     */
    constructor(options: OutboxWriterOptions<M>) {
        if (typeof options?.tableName !== "string" || options.tableName === "") {
            throw new OutboxError(
                "INVALID_CONFIG",
                `OutboxWriter: tableName must be the outbox table's name, got ${describeValue(options?.tableName)}`,
            );
        }
        if (options.client === undefined || typeof options.client.send !== "function") {
            throw new OutboxError(
                "INVALID_CONFIG",
                "OutboxWriter: client must be a DynamoDBClient from @aws-sdk/client-dynamodb",
            );
        }
        this.client = options.client;
        this.tableName = options.tableName;
        this.clock = options.clock ?? systemClock;
        this.logger = options.logger ?? silentLogger;
        const otel = traceContextOption(options.traceContext) === "active" ? loadOpenTelemetryApi() : undefined;
        const logger = this.logger;
        this.address = options.address ?? "";
        const addressKind = typeof this.address === "string" ? destinationKindOfArn(this.address) : undefined;
        const fifoAddress =
            (addressKind === DESTINATION_KINDS.sns || addressKind === DESTINATION_KINDS.sqs) &&
            this.address.endsWith(".fifo");
        if (options.fifo === false && fifoAddress) {
            throw new OutboxError(
                "INVALID_CONFIG",
                `OutboxWriter: fifo is false but address ${describeValue(this.address)} is a FIFO ${addressKind === DESTINATION_KINDS.sns ? "topic" : "queue"} (a name ending in .fifo), which takes partitions and ordering keys as MessageGroupIds and refuses a message whose group id breaks its rules; omit fifo (the address turns the checks on) or set it to true`,
                { context: { address: this.address } },
            );
        }
        this.typed = typedEventRules("OutboxWriter", options);
        this.rules = {
            newId: options.idGenerator ?? createIdGenerator(this.clock),
            schemaVersions: this.typed.schemaVersions,
            generatedIdsNeedGuard: options.idGenerator !== undefined,
            fifo: options.fifo ?? fifoAddress,
            claimCheck: claimCheckPlan(options.largePayloads, "OutboxWriter"),
            ...(otel !== undefined
                ? {
                      activeTrace: (headerCount: number, where: string, id: string) =>
                          activeTraceWithin(otel, logger, headerCount, where, id),
                  }
                : {}),
        };
        this.bindingId = options.bindingId ?? addressKind ?? "sns";
        if (typeof this.bindingId !== "string")
            throw new OutboxError(
                "INVALID_CONFIG",
                `OutboxWriter: bindingId must be a string (the destination's name), got ${describeValue(this.bindingId)}; omit it for "sns"`,
            );
        // The longest sort key this binding can make: an id of 128 '#', each escaped to three characters.
        const longestSk = utf8Length(recordSortKey("#".repeat(128), this.bindingId));
        if (longestSk > MAX_SORT_KEY_BYTES) {
            throw new OutboxError(
                "INVALID_CONFIG",
                `OutboxWriter: bindingId ${describeValue(this.bindingId)} is too long: with a 128-character id it makes a sort key of ${longestSk} bytes, and a DynamoDB sort key holds at most ${MAX_SORT_KEY_BYTES}; use a short name, e.g. "sns"`,
                { context: { size: longestSk } },
            );
        }
        this.graceSeconds = integerIn(
            "OutboxWriter",
            "compactionGraceSeconds",
            options.compactionGraceSeconds,
            WRITER_LIMITS.compactionGraceSeconds,
        );
        this.expiryShards = integerIn(
            "OutboxWriter",
            "expiryShards",
            options.expiryShards,
            HANDLER_LIMITS.expiryShards,
        );
        this.originRegion = writerOriginRegion(options.region, options.globalTable);
        this.homing = keyHomingCheck(options.keyHoming, this.originRegion, options.logger);
        this.expiryShardsRaised = false;
        this.lastMs = -1;
        this.inMs = 0n;
    }

    /**
     * Write `items` and one outbox record per message, atomically: {@link OutboxWriter.prepare} then
     * {@link OutboxWriter.commit}. Every limit is checked first; on any `INVALID_PAYLOAD` error nothing was written.
     *
     * @param request - The messages, your items, and options.
     * @returns the message ids (generated where not given) and, when asked, the capacity consumed.
     * @throws OutboxError `INVALID_PAYLOAD` for a message or item that breaks a limit, a message id already
     *   held by a record in another partition, or a keyed message homed in another region under `keyHoming`
     *   (nothing written); `INVALID_CONFIG` when `keyHoming.homeOf` throws or names no region of its `regions`
     *   (nothing written); `CONDITION_FAILED` when one of your items'
     *   conditions failed (the message names the item and the reason); `DUPLICATE_RECORD` when a message id was
     *   already written to its partition; `THROTTLED` or `UNAVAILABLE` (transient) when a retry can succeed.
     */
    async write(request: WriteRequest<M>): Promise<WriteResult> {
        return this.commit(await this.prepare(request));
    }

    /**
     * Check a request as {@link OutboxWriter.prepare} and {@link OutboxWriter.write} do, without any I/O: every limit
     * they check before they send anything (nothing is allocated, nothing is written). The redrive uses it to tell a
     * message the writer will never take from one that failed for a passing reason.
     *
     * @param request - The messages, your items, and options.
     * @throws OutboxError `INVALID_PAYLOAD` for a message or item that breaks a limit; `INVALID_CONFIG` for a clock no
     *   record can carry.
     */
    check(request: WriteRequest<M>): void {
        this.validated(request, false);
    }

    /**
     * Everything {@link OutboxWriter.prepare} checks and builds before its first I/O; `writing` says whether a write
     * follows (then a foreign write under `keyHoming`'s `"warn"` is logged).
     */
    private validated(request: WriteRequest<M>, writing: boolean): ValidatedWrite {
        const ownItems = request?.items ?? [];
        const documentItems = request?.documentItems ?? [];
        const messages = request?.messages;
        if (!Array.isArray(messages)) throw invalid(`write: messages must be an array, got ${describeValue(messages)}`);
        if (!Array.isArray(ownItems))
            throw invalid(`write: items must be an array of TransactWriteItem, got ${describeValue(ownItems)}`);
        if (!Array.isArray(documentItems))
            throw invalid(
                `write: documentItems must be an array of DocumentClient TransactItems entries, got ${describeValue(documentItems)}`,
            );
        checkAttributeValueItems(ownItems);
        const items: readonly TransactWriteItem[] =
            documentItems.length === 0
                ? ownItems
                : [...ownItems, ...marshallDocumentItems(documentItems, ownItems.length)];
        const guards = messages.filter((m: unknown) =>
            needsIdGuard((m as { id?: unknown } | null)?.id, this.rules),
        ).length;
        checkActionCount(items.length, messages.length, guards);
        checkDense(messages);
        const nowMs = Math.floor(this.clock.now());
        checkWriterClock("OutboxWriter", nowMs);
        const prepared = messages.map((m: OutboxMessage, i) => prepareMessage(m, i, this.rules));
        checkDistinctIds(prepared);
        this.homing?.(prepared, writing);

        const keylessSeqs = prepared.map(() => this.nextKeylessSeq(nowMs));
        // Until its allocation a keyed record carries seq 1, the shortest it can get: this first check never refuses a
        // write that fits, and the second, on the allocated records, is exact.
        const records = prepared.map((p, i) =>
            this.recordItem(p, p.message.orderingKey === undefined ? keylessSeqs[i]! : 1n, nowMs),
        );
        const guarded = prepared.filter((p) => p.guarded);
        const { recordPut, guardPut } = this.conditionalPuts(nowMs);
        const guardPuts = guarded.map((p) =>
            guardPut(
                idGuardItem({
                    recordId: p.id,
                    partition: p.message.partition,
                    bindingId: this.bindingId,
                    createdAt: nowMs,
                    expiresAt: p.expiresAtMs,
                    graceSeconds: this.graceSeconds,
                }),
            ),
        );
        checkSizes(items, prepared, records.map(recordPut), guardPuts);

        return { items, ownItemCount: ownItems.length, nowMs, prepared, records, guarded, guardPuts, recordPut };
    }

    /** The transaction's Puts: a record's, if its key is free, and an id guard's, if no live guard holds the id at `nowMs`. */
    private conditionalPuts(nowMs: number): {
        recordPut: (item: AttributeMap) => TransactWriteItem;
        guardPut: (item: AttributeMap) => TransactWriteItem;
    } {
        const recordAbsent = skAbsent();
        const guardFree = idGuardFree(Math.floor(nowMs / 1000));
        return {
            recordPut: (Item) => ({
                Put: {
                    TableName: this.tableName,
                    Item,
                    ConditionExpression: recordAbsent.text,
                    ...placeholders(recordAbsent),
                },
            }),
            // ALL_OLD: a refused guard names the partition that holds the id, which tells a retry from a reuse.
            guardPut: (Item) => ({
                Put: {
                    TableName: this.tableName,
                    Item,
                    ConditionExpression: guardFree.text,
                    ...placeholders(guardFree),
                    ReturnValuesOnConditionCheckFailure: "ALL_OLD",
                },
            }),
        };
    }

    /**
     * Validate the request, build the records and allocate keyed messages' sequence numbers, without writing the
     * transaction. Use it with {@link OutboxWriter.commit} to retry a write idempotently: commit the same prepared
     * write again (with a `clientRequestToken`), and DynamoDB applies it at most once within 10 minutes.
     *
     * @param request - The messages, your items, and options.
     * @throws OutboxError `INVALID_PAYLOAD` for a message or item that breaks a limit (nothing written).
     */
    async prepare(request: WriteRequest<M>): Promise<PreparedWrite> {
        const { items, ownItemCount, nowMs, prepared, records, guarded, guardPuts, recordPut } = this.validated(
            request,
            true,
        );
        await this.checkPayloads(prepared);
        // Offloaded payloads first: a failed put leaves nothing in the table, a failed transaction only objects.
        await putPayloads(
            this.rules.claimCheck,
            prepared.flatMap((p) => (p.put === undefined ? [] : [p.put])),
        );
        const consumed: ConsumedCapacity[] = [];
        const returnCapacity = request.returnConsumedCapacity ?? "NONE";
        const stamps = await this.allocateKeyedSeqs(prepared, nowMs, returnCapacity, consumed);
        for (const [i, stamp] of stamps) records[i] = this.recordItem(prepared[i]!, stamp.seq, stamp.createdAt);
        // A created_at carried forward can lengthen the envelope's time text by a few bytes; a record that then
        // breaks a limit leaves only its partition's FENCE allocation behind, as a failed transaction does.
        if (stamps.size > 0) checkSizes(items, prepared, records.map(recordPut), guardPuts);
        if (!this.expiryShardsRaised && this.expiryShards > 1 && prepared.some((p) => p.expiresAtMs !== 0)) {
            await raiseExpiryShards(
                (input) => this.client.send(new UpdateItemCommand(input)),
                this.tableName,
                this.expiryShards,
            );
            this.expiryShardsRaised = true;
        }

        return {
            messageIds: prepared.map((p) => p.id),
            input: {
                TransactItems: [...items, ...records.map(recordPut), ...guardPuts],
                ReturnConsumedCapacity: returnCapacity,
                ...(request.clientRequestToken !== undefined ? { ClientRequestToken: request.clientRequestToken } : {}),
            },
            allocationCapacity: consumed,
            describe: (index) => {
                const failed = describeFailedAction(index, items, prepared, guarded);
                // A documentItems action is named by its own field and index, not its place among all the items.
                return failed.kind === "item" && index >= ownItemCount && index < items.length
                    ? {
                          ...failed,
                          text: failed.text.replace(`items[${index}]`, `documentItems[${index - ownItemCount}]`),
                      }
                    : failed;
            },
        };
    }

    /**
     * Send a prepared write's transaction.
     *
     * @param prepared - From {@link OutboxWriter.prepare}.
     * @throws OutboxError as {@link OutboxWriter.write}.
     */
    async commit(prepared: PreparedWrite): Promise<WriteResult> {
        try {
            const out = await this.client.send(new TransactWriteItemsCommand(prepared.input));
            return {
                messageIds: [...prepared.messageIds],
                consumedCapacity: [...prepared.allocationCapacity, ...(out.ConsumedCapacity ?? [])],
            };
        } catch (err) {
            throw cancellationError(err, prepared);
        }
    }
    /** Every message's payload against its type's validator, all before the first write (validators may be async). */
    private async checkPayloads(prepared: readonly PreparedMessage[]): Promise<void> {
        if (this.typed.validators === undefined) return;
        const refusals = await Promise.all(
            prepared.map((p) => payloadRefusal(this.typed, p.message.type, p.message.payload)),
        );
        refusals.forEach((refusal, i) => {
            if (refusal === undefined) return;
            const p = prepared[i]!;
            throw invalid(
                `write: messages[${p.index}] (id "${p.id}"): ${refusal.text}; nothing was written; fix the payload, or the schema`,
                {
                    messageId: p.id,
                    messageIndex: p.index,
                    type: p.message.type,
                    ...(refusal.path !== undefined ? { path: refusal.path } : {}),
                },
            );
        });
    }

    private nextKeylessSeq(nowMs: number): bigint {
        if (nowMs > this.lastMs) {
            this.lastMs = nowMs;
            this.inMs = 0n;
        } else if (this.inMs < SEQ_PER_MS - 1n) {
            this.inMs += 1n;
        }
        return BigInt(this.lastMs) * SEQ_PER_MS + this.inMs;
    }

    /**
     * The marshalled record of a message. Every attribute derived from the creation time (`created_at`, the
     * envelope's `CreatedAt`, `claim_sort`) comes from this one call, so moving the time moves them all.
     */
    private recordItem(p: PreparedMessage, seq: bigint, createdAtMs: number): AttributeMap {
        const record = pendingRecord(
            {
                partition: p.message.partition,
                recordId: p.id,
                bindingId: this.bindingId,
                address: this.address,
                envelope: {
                    id: p.id,
                    subject: p.message.type,
                    payload: p.body,
                    headers: envelopeHeaders(p),
                    createdAt: createdAtMs,
                    expiresAt: p.expiresAtMs,
                },
                createdAt: createdAtMs,
                ...(p.message.orderingKey !== undefined ? { orderingKey: p.message.orderingKey } : {}),
                ...(this.originRegion !== undefined ? { originRegion: this.originRegion } : {}),
            },
            seq,
            createdAtMs,
        );
        return marshalRecord(record, this.expiryShards);
    }

    /**
     * One seq allocation per partition that has keyed messages ({@link allocateSeqRange}): their records get
     * `first … first+n-1` in request order, all with the allocation's `created_at`. Keyed by message index.
     */
    private async allocateKeyedSeqs(
        prepared: readonly PreparedMessage[],
        nowMs: number,
        returnCapacity: ReturnConsumedCapacity,
        consumed: ConsumedCapacity[],
    ): Promise<Map<number, KeyedStamp>> {
        const byPartition = new Map<string, number[]>();
        prepared.forEach((p, i) => {
            if (p.message.orderingKey === undefined) return;
            const list = byPartition.get(p.message.partition) ?? [];
            list.push(i);
            byPartition.set(p.message.partition, list);
        });
        const send = async (input: UpdateItemCommandInput) => {
            const out = await this.client.send(
                new UpdateItemCommand({ ...input, ReturnConsumedCapacity: returnCapacity }),
            );
            if (out.ConsumedCapacity) consumed.push(out.ConsumedCapacity);
            return out;
        };
        const fenceTtl = fenceTtlSeconds(nowMs, this.graceSeconds);
        const stamps = new Map<number, KeyedStamp>();
        for (const [partition, indexes] of byPartition) {
            let range;
            try {
                range = await allocateSeqRange(
                    send,
                    { tableName: this.tableName, partition, count: indexes.length, nowMs, fenceTtl },
                    this.logger,
                );
            } catch (err) {
                throw wrapAwsError(
                    err,
                    `write: outbox seq allocation failed for partition ${describeValue(partition)}; nothing was written`,
                    { partition },
                );
            }
            indexes.forEach((i, k) => stamps.set(i, { seq: range.firstSeq + BigInt(k), createdAt: range.createdAt }));
        }
        return stamps;
    }
}

/** A keyed message's allocated seq and the creation time its record carries. */
interface KeyedStamp {
    readonly seq: bigint;
    readonly createdAt: number;
}

/** A request checked and built, before any I/O: what {@link OutboxWriter.prepare} goes on from. */
interface ValidatedWrite {
    readonly items: readonly TransactWriteItem[];
    /** How many of `items` are the caller's `items`; the rest are its marshalled `documentItems`. */
    readonly ownItemCount: number;
    readonly nowMs: number;
    readonly prepared: readonly PreparedMessage[];
    /** Each message's record, in request order; a keyed message's until its seq is allocated. */
    readonly records: AttributeMap[];
    /** The messages whose id gets a guard, in request order. */
    readonly guarded: readonly PreparedMessage[];
    readonly guardPuts: readonly TransactWriteItem[];
    readonly recordPut: (item: AttributeMap) => TransactWriteItem;
}

/** The writer's `traceContext`, checked: `"active"` (the default) or `"none"`. */
function traceContextOption(value: unknown): "active" | "none" {
    const traceContext = value ?? "active";
    if (traceContext !== "active" && traceContext !== "none") {
        throw new OutboxError(
            "INVALID_CONFIG",
            `OutboxWriter: traceContext must be "active" (the active OpenTelemetry span's, when @opentelemetry/api is installed) or "none", got ${describeValue(traceContext)}; omit it for "active"`,
        );
    }
    return traceContext;
}

/** A sparse `messages` array is refused: its holes would be messages written as nothing. */
function checkDense(messages: readonly unknown[]): void {
    for (let i = 0; i < messages.length; i++) {
        if (!(i in messages))
            throw invalid(
                `write: messages[${i}] is a hole in a sparse array (e.g. [a, , b]); pass a dense array of messages`,
                { messageIndex: i },
            );
    }
}

/** Two messages of one write never share an id: one record per id, in one partition. */
function checkDistinctIds(prepared: readonly PreparedMessage[]): void {
    const firstWithId = new Map<string, PreparedMessage>();
    for (const p of prepared) {
        const prior = firstWithId.get(p.id);
        if (prior === undefined) {
            firstWithId.set(p.id, p);
        } else if (prior.message.partition === p.message.partition) {
            throw invalid(
                `write: messages share id "${p.id}" in partition ${describeValue(p.message.partition)}; ids must be unique`,
                { messageId: p.id },
            );
        } else {
            throw invalid(
                `write: messages[${prior.index}] and messages[${p.index}] share id "${p.id}", in partitions ${describeValue(prior.message.partition)} and ${describeValue(p.message.partition)}; ids are unique across the table (one record per id, in one partition); use a new id, or omit it and the writer generates one`,
                { messageId: p.id, messageIndex: p.index },
            );
        }
    }
}
