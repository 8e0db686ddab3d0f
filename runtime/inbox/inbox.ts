/**
 * The consumer's side of the outbox: apply a message's effect exactly once. The consumer's own writes and an
 * inbox marker go in ONE `TransactWriteItems`; the marker is conditioned on its absence, so a redelivered message
 * (same source and outbox id) changes nothing and is reported as a duplicate. A message that names its source is
 * also checked, by default, against the key an inbox of an earlier version wrote for its outbox id alone. With
 * `markerShards` N > 1, one consumer's markers are spread over N partition keys (the shard from the outbox id), and
 * `previousMarkerShards` keeps the markers of the layout before a change honoured for a window.
 *
 * @packageDocumentation
 */
import {
    TransactWriteItemsCommand,
    type AttributeValue,
    type DynamoDBClient,
    type TransactWriteItem,
    type TransactWriteItemsCommandInput,
} from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../errors";
import { integerIn } from "../integer-setting";
import { MAX_ITEM_BYTES, MAX_TRANSACTION_ACTIONS, MAX_TRANSACTION_BYTES, utf8Length } from "../record/item-size";
import { INBOX_LIMITS } from "../limits";
import { systemClock, type Clock } from "../ports";
import { INBOX_MARKER } from "../schema";
import { cancellationCodes, isTransactionCanceled, wrapAwsError } from "../store/aws-errors";
import {
    actionSize,
    actionTarget,
    cancellationReasonCode,
    describeAction,
    describeValue,
    transactionActionSize,
} from "../record/transact-items";
import { sourceProblem } from "../record/message";
import {
    checkAttributeValueItems,
    marshallDocumentItems,
    type DocumentTransactWriteItem,
} from "../record/document-items";
import { inboxMarkerItem, inboxMarkerKey, inboxMarkerPartition, type InboxMarkerLayout } from "./marker";

/** Options for {@link Inbox}. */
export interface InboxOptions {
    /** The DynamoDB client (same account and region as the inbox table and the consumer's tables). */
    readonly client: DynamoDBClient;
    /**
     * The consumer's name: part of every marker's key (`INBOX#<consumer>`), so two consumers of the same messages
     * each apply them once. 1-128 letters, digits, `-`, `_`, `.` or `:`. Keep it stable: a renamed consumer has
     * no markers and applies redelivered messages again.
     */
    readonly consumer: string;
    /** The table the markers go in: the consumer's own table, or one of their own. */
    readonly tableName: string;
    /** The table's partition key attribute (a string attribute). @default "PK" */
    readonly partitionKey?: string;
    /**
     * The table's sort key attribute (a string attribute), or `null` for a table without a sort key: the marker's
     * partition key is then `INBOX#<consumer>#<outbox id>`.
     * @default "SK"
     */
    readonly sortKey?: string | null;
    /** The table's TTL attribute: markers carry their expiry there, in epoch seconds. @default "ttl" */
    readonly ttlAttribute?: string;
    /**
     * How long a marker stays before DynamoDB's TTL may delete it, in seconds. It must outlive every delivery of
     * the message, or a later one is applied again: SQS keeps a message up to 14 days, and the relay can publish
     * an outbox id again after the first publish. An expired marker that TTL has not deleted yet still counts.
     * From 60 to 31,536,000 (365 days).
     * @default 1296000 (15 days: SQS's longest retention plus one day)
     */
    readonly markerTtlSeconds?: number;
    /** The clock for the marker's `applied_at` and TTL. @default systemClock */
    readonly clock?: Clock;
    /**
     * Whether a message that names its source (`outbox.source`) is also checked against the marker an inbox of an
     * earlier version wrote for its outbox id alone (`PK = INBOX#<consumer>`, `SK = <outbox id>`): a
     * `ConditionCheck` in the same transaction, one more of its 100 actions and 2 more write units per message.
     * An event applied before the upgrade and delivered again after it, now with its source, is then a duplicate
     * instead of being applied again. `true`: always; `false`: never; a `Date`: until that instant (by `clock`).
     * Older-key markers are written only for messages without a source; keep the check on until
     * `markerTtlSeconds` (15 days by default) after the last relay feeding this consumer stamps sources, then turn
     * it off. While it is on, a message whose outbox id equals that of another outbox's event applied under the
     * older key is a duplicate, as it was before sources (see docs/runtime.md, "Sources and the migration").
     * @default true
     */
    readonly legacyMarkerCheck?: boolean | Date;
    /**
     * How many partition keys this consumer's markers (of each source) are spread over: `INBOX#<consumer>@<source>~<k>`,
     * k from 0 to N-1 chosen from the outbox id (FNV-1a, {@link inboxMarkerShard}), so the same event always lands on
     * the same marker. One partition key takes DynamoDB's 1,000 write units a second and a marker costs 2, so N keys
     * carry about N × 500 messages a second for one consumer and source (docs/scale.md, "The inbox's ceiling").
     * 1 writes the unsharded key, byte for byte the key of every marker before shards, so an upgrade changes
     * nothing until a team sets N. From 1 to 64.
     *
     * Changing N on a live consumer moves most events to another key: their markers are not found there. Set
     * `previousMarkerShards` to the N before the change, for the window that option describes, or a redelivered
     * event is applied again.
     * @default 1
     */
    readonly markerShards?: number;
    /**
     * The marker layout before a change of `markerShards` (from 1, the unsharded key of earlier versions, to N, or
     * from one N to another), kept in force for a window: each message's transaction also puts its marker under
     * the previous layout's key, conditioned on its absence like the marker itself (and, with `legacyMarkerCheck`,
     * checks the older sourceless key there too). An event applied before the change, or by an instance still on the
     * previous layout during the deploy, is then a duplicate; and that instance finds the markers this one writes,
     * so a rollback during the window applies nothing twice. A `Put` rather than a `ConditionCheck` for that reason;
     * both cost 2 write units on the previous layout's key, so during the window the ceiling stays the previous
     * layout's. `until`: when the window ends, by `clock`; set it at least `markerTtlSeconds` after the last instance
     * on the previous layout stopped (15 days by default), then remove the option. Without `until` the window stays
     * open until the option is removed.
     * @default undefined (no window: only the current layout's key)
     */
    readonly previousMarkerShards?: PreviousMarkerShards;
}

/** The marker layout before a change of `markerShards`, and until when it is honoured ({@link InboxOptions}). */
export interface PreviousMarkerShards {
    /** The `markerShards` the consumer had before (1 for every inbox of an earlier version), from 1 to 64. */
    readonly shards: number;
    /** When the window ends, by the inbox's clock. @default undefined (open until the option is removed) */
    readonly until?: Date;
}

/**
 * The event a marker stands for: the message's outbox id and, when the message names one, its source. A
 * `DeliveredOutboxMessage` (what `createInboxHandler` hands the consumer) is one.
 */
export interface InboxEvent {
    /** The message's outbox id (`outbox.id`). */
    readonly outboxId: string;
    /**
     * The outbox the message comes from (`outbox.source`). Absent on a message from a relay that stamps none (an
     * older publisher, a GoBridge relay): its marker has the older key, without a source.
     * @default undefined
     */
    readonly source?: string;
}

/**
 * The consumer's writes in both shapes, each in its own field as `OutboxWriter.write` takes them: `items` in the
 * SDK's AttributeValue form, `documentItems` in the DocumentClient's (native values, as `@aws-sdk/lib-dynamodb`'s
 * `TransactWriteCommand`, ElectroDB's and dynamodb-toolbox's `params()` give them). An array given where this
 * object may go is `items` alone, as before.
 */
export interface InboxWrites {
    /** Actions in the SDK's `TransactWriteItem` form. They come first. @default [] */
    readonly items?: readonly TransactWriteItem[];
    /**
     * Actions in the DocumentClient's shape, marshalled up front as `@aws-sdk/lib-dynamodb` marshalls them by
     * default (`@aws-sdk/util-dynamodb`); they go after `items`. A field of their own because an AttributeValue map
     * cannot be told apart from a native one safely (a native attribute `{ S: "x" }` is a valid map).
     * @default []
     */
    readonly documentItems?: readonly DocumentTransactWriteItem[];
}

/** What {@link Inbox.apply} did. */
export interface InboxApplyResult {
    /**
     * `applied`: the consumer's writes and the marker were committed. `duplicate`: the marker was already there
     * (the message was applied before, possibly by this call's own first attempt when its answer was lost), so
     * nothing was written.
     */
    readonly outcome: "applied" | "duplicate";
}

const CONSUMER_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;

/** One action the inbox adds to the transaction itself, with how errors and refusals name it. */
interface OwnAction {
    readonly action: TransactWriteItem;
    readonly key: Record<string, AttributeValue>;
    /** How a cancellation names it: `the inbox marker (table "t")`, … */
    readonly label: string;
    /** How the action count's refusal names it after "the inbox marker and". */
    readonly role: string;
    /** The option that adds it, for the refusal's fix. */
    readonly option?: "legacyMarkerCheck" | "previousMarkerShards";
}

/** DynamoDB's limits for key values: a partition key up to 2048 bytes, a sort key up to 1024. */
const MAX_PARTITION_KEY_BYTES = 2048;
const MAX_SORT_KEY_BYTES = 1024;

function invalidConfig(message: string, context: Record<string, string> = {}): OutboxError {
    return new OutboxError("INVALID_CONFIG", message, { context });
}

/** `legacyMarkerCheck`, checked: a boolean or a valid Date. */
function legacyCheckOption(value: unknown): boolean | Date {
    if (value === undefined) return true;
    if (typeof value === "boolean") return value;
    if (value instanceof Date && Number.isFinite(value.getTime())) return value;
    throw invalidConfig(
        `Inbox: legacyMarkerCheck is ${describeValue(value)}; it must be true (check the older marker key), false (do not), or a valid Date (check it until then); omit it for true`,
        { legacyMarkerCheck: String(value) },
    );
}

/** `previousMarkerShards`, checked against `markerShards`. */
function previousShardsOption(value: unknown, markerShards: number): PreviousMarkerShards | undefined {
    if (value === undefined) return undefined;
    const fix =
        "it must be { shards, until? }: the markerShards the consumer had before (1 for every inbox of an earlier version), and optionally the Date the window ends; omit it when markerShards never changed";
    if (value === null || typeof value !== "object" || value instanceof Date)
        throw invalidConfig(`Inbox: previousMarkerShards is ${describeValue(value)}; ${fix}`, {
            previousMarkerShards: String(value),
        });
    const { shards, until } = value as PreviousMarkerShards;
    const { min, max } = INBOX_LIMITS.markerShards;
    if (!Number.isInteger(shards) || shards < min || shards > max)
        throw invalidConfig(
            `Inbox: previousMarkerShards.shards is ${describeValue(shards)}; expected an integer from ${min} to ${max}: the markerShards the consumer had before (1 for every inbox of an earlier version)`,
            { previousMarkerShards: String(shards) },
        );
    if (shards === markerShards)
        throw invalidConfig(
            `Inbox: previousMarkerShards.shards is ${shards}, the same as markerShards: there is no previous layout to honour; remove previousMarkerShards, or set markerShards to the new count`,
            { previousMarkerShards: String(shards), markerShards: String(markerShards) },
        );
    if (until !== undefined && !(until instanceof Date && Number.isFinite(until.getTime())))
        throw invalidConfig(
            `Inbox: previousMarkerShards.until is ${describeValue(until)}; it must be a valid Date (the window ends then), or omitted (open until the option is removed)`,
            { until: String(until) },
        );
    return { shards, ...(until !== undefined ? { until } : {}) };
}

function attributeName(value: unknown, option: string, fallback: string): string {
    const name = value ?? fallback;
    if (typeof name !== "string" || name === "" || utf8Length(name) > 255) {
        throw invalidConfig(
            `Inbox: ${option} is ${describeValue(name)}; it must be the name of an attribute of the table (1 to 255 bytes); omit it for "${fallback}"`,
            { [option]: String(name) },
        );
    }
    return name;
}

/**
 * The inbox of one consumer: each event's effect (its source and outbox id) applied at most once, in the same
 * transaction as a marker.
 *
 * @example
 * const inbox = new Inbox({ client, consumer: "billing", tableName: "billing" });
 * const { outcome } = await inbox.apply({ outboxId, source }, [
 *     { Put: { TableName: "billing", Item: { PK: { S: `INVOICE#${order.orderId}` }, SK: { S: "META" }, total: { N: String(order.total) } } } },
 * ]);
 * // outcome is "duplicate" when this event (source and outbox id) was applied before: nothing was written
 */
export class Inbox {
    /** The consumer's name. */
    readonly consumer: string;
    /** The table the markers go in. */
    readonly tableName: string;
    /** The marker TTL, in seconds. */
    readonly markerTtlSeconds: number;
    private readonly client: DynamoDBClient;
    private readonly layout: InboxMarkerLayout;
    private readonly clock: Clock;
    private readonly legacyCheck: boolean | Date;
    /** How many partition keys the markers of one source are spread over. */
    readonly markerShards: number;
    private readonly previousShards: PreviousMarkerShards | undefined;

    /**
     * @param options - The client, the consumer's name, the table and the optional settings.
     * @throws OutboxError `INVALID_CONFIG` naming the option, its value, what is allowed and the fix.
     */
    constructor(options: InboxOptions) {
        if (options === null || typeof options !== "object")
            throw invalidConfig(
                `Inbox: options must be an object with client, consumer and tableName, got ${describeValue(options)}`,
            );
        if (options.client === undefined || options.client === null || typeof options.client.send !== "function") {
            throw invalidConfig("Inbox: client must be a DynamoDBClient from @aws-sdk/client-dynamodb");
        }
        if (typeof options.consumer !== "string" || !CONSUMER_NAME.test(options.consumer)) {
            throw invalidConfig(
                `Inbox: consumer is ${describeValue(options.consumer)}; a consumer name is 1 to 128 letters, digits, '-', '_', '.' or ':' (no '#', '@' or space: it is part of the marker key ${INBOX_MARKER.partitionPrefix}<consumer>${INBOX_MARKER.sourceSeparator}<source>); name the consuming service, e.g. "billing"`,
                { consumer: String(options.consumer) },
            );
        }
        if (typeof options.tableName !== "string" || options.tableName === "") {
            throw invalidConfig(
                `Inbox: tableName is ${describeValue(options.tableName)}; it must be the name of the table the markers go in (the consumer's own table, or one of their own)`,
            );
        }
        const partitionKey = attributeName(options.partitionKey, "partitionKey", INBOX_MARKER.partitionKey);
        const sortKey =
            options.sortKey === null ? null : attributeName(options.sortKey, "sortKey", INBOX_MARKER.sortKey);
        const ttl = attributeName(options.ttlAttribute, "ttlAttribute", INBOX_MARKER.ttl);
        const names = [partitionKey, ...(sortKey === null ? [] : [sortKey]), ttl, INBOX_MARKER.appliedAt];
        const clash = names.find((n, i) => names.indexOf(n) !== i);
        if (clash !== undefined) {
            throw invalidConfig(
                `Inbox: the attribute "${clash}" is given two roles (partitionKey "${partitionKey}", sortKey ${sortKey === null ? "none" : `"${sortKey}"`}, ttlAttribute "${ttl}", and "${INBOX_MARKER.appliedAt}", which the marker always carries); give each its own attribute`,
                { attribute: clash },
            );
        }
        this.client = options.client;
        this.consumer = options.consumer;
        this.tableName = options.tableName;
        this.layout = { partitionKey, sortKey, ttl };
        this.markerTtlSeconds = integerIn(
            "Inbox",
            "markerTtlSeconds",
            options.markerTtlSeconds,
            INBOX_LIMITS.markerTtlSeconds,
        );
        this.clock = options.clock ?? systemClock;
        this.legacyCheck = legacyCheckOption(options.legacyMarkerCheck);
        this.markerShards = integerIn("Inbox", "markerShards", options.markerShards, INBOX_LIMITS.markerShards);
        this.previousShards = previousShardsOption(options.previousMarkerShards, this.markerShards);
    }

    /**
     * The marker's primary key for an event, in SDK attribute-value form.
     *
     * @param event - The message's outbox id and source (`{ outboxId, source }`), or its outbox id alone (a message
     *   without a source: the older key).
     * @throws OutboxError `INVALID_PAYLOAD` when the id is not a non-empty string or too long for a key, or the
     *   source is not one a relay stamps.
     */
    markerKey(event: string | InboxEvent): Record<string, AttributeValue> {
        const { outboxId, source } = this.eventOf(event);
        return inboxMarkerKey(this.layout, this.consumer, outboxId, source, this.markerShards);
    }

    /**
     * Validate the consumer's writes and build the transaction: `items` first, then the marker's conditional Put,
     * then (while `previousMarkerShards` is on) the marker's conditional Put under the previous layout, then (for a
     * message with a source, while `legacyMarkerCheck` is on) a `ConditionCheck` that no marker has the older key,
     * in the current layout and (in the window) the previous one. Sends nothing.
     *
     * @param event - The message's outbox id and source (`{ outboxId, source }`), or its outbox id alone.
     * @param writes - The consumer's own Put/Update/Delete/ConditionCheck actions (each names its table): an array
     *   of SDK `TransactWriteItem`s, or {@link InboxWrites} (`{ items, documentItems }`); at most 99 in all, 1 fewer
     *   for each action the inbox adds besides its marker. @default []
     * @throws OutboxError `INVALID_PAYLOAD` naming the id, the source or the item that breaks a limit, or a
     *   documentItems action that cannot be marshalled.
     */
    prepare(
        event: string | InboxEvent,
        writes: readonly TransactWriteItem[] | InboxWrites = [],
    ): TransactWriteItemsCommandInput {
        return this.transaction(event, writes).input;
    }

    /** The consumer's writes as SDK actions: `items`, then the marshalled `documentItems`; and how many are `items`. */
    private actionsOf(
        writes: unknown,
        where: string,
        outboxId: string,
    ): { items: readonly TransactWriteItem[]; ownItemCount: number } {
        if (Array.isArray(writes)) return { items: writes as TransactWriteItem[], ownItemCount: writes.length };
        const refuse = (what: string, value: unknown) =>
            new OutboxError("INVALID_PAYLOAD", `${where}: ${what}, got ${describeValue(value)}`, {
                context: { outboxId },
            });
        const fields = writes !== null && typeof writes === "object" ? Object.keys(writes) : [];
        // An action passed alone ({ Put: … }) must not read as "no writes": only these two fields, and one at least.
        if (fields.length === 0 || fields.some((f) => f !== "items" && f !== "documentItems"))
            throw refuse(
                `items must be an array of TransactWriteItem (the consumer's own writes), or { items, documentItems }${fields.length > 0 ? ` (this object has ${fields.map((f) => JSON.stringify(f)).join(", ")})` : ""}`,
                writes,
            );
        const { items = [], documentItems = [] } = writes as InboxWrites;
        if (!Array.isArray(items)) throw refuse("items must be an array of TransactWriteItem", items);
        if (!Array.isArray(documentItems))
            throw refuse("documentItems must be an array of DocumentClient TransactItems entries", documentItems);
        return {
            items:
                documentItems.length === 0
                    ? items
                    : [...items, ...marshallDocumentItems(documentItems, items.length, where)],
            ownItemCount: items.length,
        };
    }

    /** The transaction of {@link prepare}, with the inbox's own actions (for naming them when it fails). */
    private transaction(
        event: string | InboxEvent,
        writes: readonly TransactWriteItem[] | InboxWrites,
    ): {
        input: TransactWriteItemsCommandInput;
        own: OwnAction[];
        items: readonly TransactWriteItem[];
        ownItemCount: number;
    } {
        const { outboxId, source } = this.eventOf(event);
        const where = `inbox "${this.consumer}" (${source !== undefined ? `source "${source}", ` : ""}outbox id "${outboxId}")`;
        const { items, ownItemCount } = this.actionsOf(writes, where, outboxId);
        const nowMs = this.clock.now();
        const own = this.ownActions(outboxId, source, nowMs);
        if (items.length > MAX_TRANSACTION_ACTIONS - own.length) {
            const roles = own.slice(1).map((a) => a.role);
            const options = [...new Set(own.flatMap((a) => (a.option === undefined ? [] : [a.option])))];
            const ownText =
                roles.length === 0
                    ? "the inbox marker"
                    : `the inbox marker and ${roles.length === 1 ? roles[0] : `${roles.slice(0, -1).join(", ")} and ${roles.at(-1)}`}`;
            throw new OutboxError(
                "INVALID_PAYLOAD",
                `${where}: ${items.length} items + ${ownText} = ${items.length + own.length} actions; a DynamoDB transaction holds at most ${MAX_TRANSACTION_ACTIONS}, so a message's writes are at most ${MAX_TRANSACTION_ACTIONS - own.length}; write less per message (e.g. split the event, or let a follow-up message carry the rest)${options.map((o) => (o === "legacyMarkerCheck" ? ", or turn legacyMarkerCheck off once its window is over" : ", or remove previousMarkerShards once its window is over")).join("")}`,
                { context: { outboxId, actions: items.length + own.length } },
            );
        }
        const ownKeys = own.map((a) => a.key);
        // DynamoDB counts the expressions and the names and values they use toward the 4 MB, not only the items.
        let total = own.reduce((sum, a) => sum + transactionActionSize(a.action), 0);
        for (let i = 0; i < items.length; i++) {
            if (!(i in items))
                throw new OutboxError(
                    "INVALID_PAYLOAD",
                    `${where}: items[${i}] is a hole in a sparse array; pass a dense array of TransactWriteItem`,
                    { context: { outboxId, item: i } },
                );
            const action = items[i]!;
            const size = actionSize(action, i, `${where}: items[${i}]`);
            if (size > MAX_ITEM_BYTES) {
                throw new OutboxError(
                    "INVALID_PAYLOAD",
                    `${where}: ${describeAction(action, i)} is ${size} bytes; DynamoDB items hold at most ${MAX_ITEM_BYTES} bytes; shrink it`,
                    { context: { outboxId, item: i, size } },
                );
            }
            total += transactionActionSize(action);
            const target = actionTarget(action);
            if (
                target.tableName === this.tableName &&
                target.key !== undefined &&
                ownKeys.some((key) => Object.keys(key).every((k) => target.key?.[k]?.S === key[k]?.S))
            ) {
                throw new OutboxError(
                    "INVALID_PAYLOAD",
                    `${where}: ${describeAction(action, i)} is on the inbox marker's own key; the inbox writes that row itself (DynamoDB refuses two actions on one item in a transaction); use another key`,
                    { context: { outboxId, item: i } },
                );
            }
        }
        if (total > MAX_TRANSACTION_BYTES) {
            throw new OutboxError(
                "INVALID_PAYLOAD",
                `${where}: the items and the marker add up to ${total} bytes; a DynamoDB transaction holds at most ${MAX_TRANSACTION_BYTES} bytes; write less per message`,
                { context: { outboxId, size: total } },
            );
        }
        // A native item among the SDK-shaped ones would reach DynamoDB as is, and its refusal names nothing.
        checkAttributeValueItems(items.slice(0, ownItemCount), where);
        return { input: { TransactItems: [...items, ...own.map((a) => a.action)] }, own, items, ownItemCount };
    }

    /**
     * The inbox's own actions, in this order: the marker's conditional Put; while `previousMarkerShards` is on, the
     * marker's Put under the previous layout; for a message with a source while `legacyMarkerCheck` is on, the
     * check that no marker has the older sourceless key, then (in the window) that key under the previous layout.
     * An action whose key another already has is left out: DynamoDB refuses two actions on one item.
     */
    private ownActions(outboxId: string, source: string | undefined, nowMs: number): OwnAction[] {
        const table = `(table "${this.tableName}")`;
        const absent = {
            ConditionExpression: "attribute_not_exists(#pk)",
            ExpressionAttributeNames: { "#pk": this.layout.partitionKey },
        };
        const previous = this.previousShardsNow(nowMs);
        const layouts = previous === undefined ? [this.markerShards] : [this.markerShards, previous];
        const own: OwnAction[] = [];
        const seen = new Set<string>();
        const add = (key: Record<string, AttributeValue>, entry: Omit<OwnAction, "key">): void => {
            const id = JSON.stringify(key);
            if (seen.has(id)) return;
            seen.add(id);
            own.push({ ...entry, key });
        };
        layouts.forEach((shards, i) => {
            const item = inboxMarkerItem(
                this.layout,
                this.consumer,
                outboxId,
                nowMs,
                this.markerTtlSeconds,
                source,
                shards,
            );
            add(inboxMarkerKey(this.layout, this.consumer, outboxId, source, shards), {
                action: { Put: { TableName: this.tableName, Item: item, ...absent } },
                label:
                    i === 0
                        ? `the inbox marker ${table}`
                        : `the inbox marker under the previous layout (previousMarkerShards ${shards}) ${table}`,
                role: `its copy under the previous layout (previousMarkerShards ${shards})`,
                ...(i === 0 ? {} : { option: "previousMarkerShards" as const }),
            });
        });
        if (source !== undefined && this.checksLegacyKey(nowMs)) {
            layouts.forEach((shards, i) => {
                const key = inboxMarkerKey(this.layout, this.consumer, outboxId, undefined, shards);
                add(key, {
                    action: { ConditionCheck: { TableName: this.tableName, Key: key, ...absent } },
                    label:
                        i === 0
                            ? `the inbox's check of the older marker key ${table}`
                            : `the inbox's check of the older marker key under the previous layout (previousMarkerShards ${shards}) ${table}`,
                    role:
                        i === 0
                            ? "its check of the older key (legacyMarkerCheck)"
                            : `its check of the older key under the previous layout (previousMarkerShards ${shards})`,
                    option: "legacyMarkerCheck",
                });
            });
        }
        return own;
    }

    /** The previous layout's shard count while its window is on, else `undefined`. */
    private previousShardsNow(nowMs: number): number | undefined {
        const previous = this.previousShards;
        if (previous === undefined) return undefined;
        return previous.until === undefined || nowMs < previous.until.getTime() ? previous.shards : undefined;
    }

    /**
     * Apply the consumer's writes for one message, once: `items` and the marker in one transaction. When the
     * marker is already there (or, with `legacyMarkerCheck`, one with the older key; or, with
     * `previousMarkerShards`, one under the previous layout), nothing is written and the outcome is `duplicate`;
     * that is never an error.
     *
     * @param event - The message's outbox id and source: `{ outboxId, source }`, or the message `createInboxHandler`
     *   hands the consumer. An outbox id alone (a string) keys the marker without a source: the older key, for a
     *   message that names none.
     * @param writes - The consumer's own writes: an array of SDK `TransactWriteItem`s, or {@link InboxWrites}
     *   (`{ items, documentItems }`, native values in `documentItems`); at most 99 in all (1 fewer for each action
     *   the inbox adds: the older key's check, and in a `previousMarkerShards` window the previous layout's marker
     *   and check). @default [] (only the marker: the message is recorded as seen)
     * @returns `applied`, or `duplicate`.
     * @throws OutboxError `INVALID_PAYLOAD` for an id or items that break a limit, a native value among `items`, or
     *   a `documentItems` action that cannot be marshalled, naming the item (nothing sent);
     *   `CONDITION_FAILED` when one of the consumer's own conditions failed (the message names the item; nothing
     *   was written, no marker either); `THROTTLED`, `UNAVAILABLE` or a `transient` cancellation (a concurrent
     *   transaction on the same items, such as the same message handled twice at once) when a retry can succeed.
     */
    async apply(
        event: string | InboxEvent,
        writes: readonly TransactWriteItem[] | InboxWrites = [],
    ): Promise<InboxApplyResult> {
        const { input, own, items, ownItemCount } = this.transaction(event, writes);
        try {
            await this.client.send(new TransactWriteItemsCommand(input));
            return { outcome: "applied" };
        } catch (err) {
            // The inbox's own actions follow the consumer's: any of them finding its marker means a duplicate.
            const codes = isTransactionCanceled(err) ? cancellationCodes(err) : [];
            for (let i = items.length; i < items.length + own.length; i++)
                if (codes[i] === "ConditionalCheckFailed") return { outcome: "duplicate" };
            throw this.failure(err, this.eventOf(event), items, own, ownItemCount);
        }
    }

    /** Whether the older key is checked now. */
    private checksLegacyKey(nowMs: number): boolean {
        const check = this.legacyCheck;
        return check instanceof Date ? nowMs < check.getTime() : check;
    }

    /** The event's outbox id and source, checked. */
    private eventOf(event: unknown): { outboxId: string; source?: string } {
        if (typeof event === "string" || event === null || typeof event !== "object") {
            this.checkOutboxId(event, undefined);
            return { outboxId: event as string };
        }
        const { outboxId, source } = event as InboxEvent;
        if (source !== undefined) {
            const problem = sourceProblem(source);
            if (problem !== undefined)
                throw new OutboxError(
                    "INVALID_PAYLOAD",
                    `inbox "${this.consumer}": the message's source (outbox.source) is ${describeValue(source)}; it ${problem}; the relays of this package stamp the outbox's name there: it was not published by one`,
                    { context: { consumer: this.consumer } },
                );
        }
        this.checkOutboxId(outboxId, source);
        return { outboxId, ...(source !== undefined ? { source } : {}) };
    }

    private checkOutboxId(outboxId: unknown, source: string | undefined): asserts outboxId is string {
        if (typeof outboxId !== "string" || outboxId === "") {
            throw new OutboxError(
                "INVALID_PAYLOAD",
                `inbox "${this.consumer}": the outbox id is ${describeValue(outboxId)}; it must be the message's non-empty outbox.id`,
                { context: { consumer: this.consumer } },
            );
        }
        const bytes = utf8Length(outboxId);
        // The longest partition any layout this inbox writes or checks may give the id (a shard adds `~<k>`).
        const shards = [this.markerShards, ...(this.previousShards === undefined ? [] : [this.previousShards.shards])];
        const prefix = Math.max(
            ...shards.flatMap((n) =>
                [source, undefined].map((s) =>
                    utf8Length(
                        `${inboxMarkerPartition(this.consumer, s, n > 1 ? n - 1 : undefined)}${INBOX_MARKER.idSeparator}`,
                    ),
                ),
            ),
        );
        const [limit, part] =
            this.layout.sortKey === null
                ? [MAX_PARTITION_KEY_BYTES - prefix, "partition key"]
                : [MAX_SORT_KEY_BYTES, "sort key"];
        if (bytes > limit) {
            throw new OutboxError(
                "INVALID_PAYLOAD",
                `inbox "${this.consumer}": the outbox id is ${bytes} bytes; the marker's ${part} holds at most ${limit} bytes of it; outbox ids from OutboxWriter are at most 128`,
                { context: { consumer: this.consumer, size: bytes } },
            );
        }
    }

    /** The error of a failed transaction, naming whose action failed and why. */
    private failure(
        err: unknown,
        event: { outboxId: string; source?: string },
        items: readonly TransactWriteItem[],
        own: readonly OwnAction[],
        ownItemCount: number,
    ): unknown {
        const { outboxId, source } = event;
        const where = `inbox "${this.consumer}" (${source !== undefined ? `source "${source}", ` : ""}outbox id "${outboxId}")`;
        const context = { consumer: this.consumer, outboxId, ...(source !== undefined ? { source } : {}) };
        if (!isTransactionCanceled(err))
            return wrapAwsError(
                err,
                `${where}: the transaction failed; nothing was applied and no marker written`,
                context,
            );
        const reasons =
            (err as { CancellationReasons?: ({ Message?: string } | undefined)[] }).CancellationReasons ?? [];
        const failed = cancellationCodes(err)
            .map((code, i) => ({ code, i, message: reasons[i]?.Message ?? "" }))
            .filter((r) => r.code !== "" && r.code !== "None");
        if (failed.length === 0) {
            return new OutboxError(
                "UNAVAILABLE",
                `${where}: the transaction was cancelled with no reasons; nothing was applied and no marker written; retry`,
                { cause: err, context },
            );
        }
        // A documentItems action is named by its own field and index, not its place among all the items.
        const describe = (i: number): string =>
            i < ownItemCount
                ? describeAction(items[i]!, i)
                : i < items.length
                  ? describeAction(items[i]!, i).replace(`items[${i}]`, `documentItems[${i - ownItemCount}]`)
                  : (own[i - items.length]?.label ?? `the inbox's action ${i} (table "${this.tableName}")`);
        const texts = failed.map((r) => {
            const own =
                r.i < items.length && r.code === "ConditionalCheckFailed"
                    ? ": the consumer's own condition failed"
                    : "";
            return `${describe(r.i)}: ${r.code}${r.message ? ` (${r.message})` : ""}${own}`;
        });
        const conflict = failed.every((r) => r.code === "TransactionConflict");
        const first = failed[0]!;
        return new OutboxError(
            cancellationReasonCode(first.code),
            `${where}: transaction cancelled, nothing was applied and no marker written: ${texts.join("; ")}${conflict ? "; another transaction touched the same items (the same message handled twice at once?), retry" : ""}`,
            {
                cause: err,
                ...(conflict ? { transient: true } : {}),
                context: {
                    ...context,
                    failedAction: first.i,
                    failedKind: first.i < items.length ? "item" : "marker",
                    reason: first.code,
                },
            },
        );
    }
}
