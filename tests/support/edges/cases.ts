/**
 * What one generated case is: a destination (SNS standard or FIFO, SQS standard or FIFO, an EventBridge bus), a writer
 * set up one way (with the destination's `address`, with `fifo` set as well, or with neither, as the README builds
 * one), with or without a claim check, the relay's settings, the faults the destination answers with, and 1 to 5
 * messages at the edges. A message's sizes are not numbers here but a place to grow (the payload, a header, the
 * ordering key, the partition, the type, the id), a pattern to grow it with, and how far from an edge to stop:
 * `realize.ts` finds the edge on the writer itself. So a case prints short, and shrinks.
 *
 * @packageDocumentation
 */
import fc from "fast-check";
import type { DestinationKind } from "../../../runtime/destination/kind";
import { ASCII_CLASSES, SENDABLE_CLASSES, edgeLength, pattern, text, type CharacterClass, type Text } from "./text";

/** How the case's writer is built. */
export type WriterMode =
    /** `address` is the destination's ARN; `fifo` is derived from it (a `.fifo` topic or queue). */
    | "address"
    /** `address`, and `fifo: true` set. */
    | "address+fifo"
    /** No `address` and no `fifo`, as the README builds a writer: the destination refuses what the writer cannot know. */
    | "bare";

/** Where a message grows to its edge. */
export type FillPlace = "payload" | "header" | "orderingKey" | "partition" | "type" | "id";

/**
 * How a message reaches an edge: `place` grows by `pattern` until the writer refuses it (`target: "writer"`) or until
 * the claim check would offload it (`target: "offload"`), then `delta` characters further (negative: fewer).
 */
export interface Fill {
    readonly place: FillPlace;
    readonly pattern: readonly string[];
    readonly target: "writer" | "offload";
    readonly delta: number;
}

/** One generated message. */
export interface MessageSpec {
    /** Index into the case's partitions. */
    readonly partition: number;
    /** Index into the case's ordering keys; `undefined`: keyless. */
    readonly key?: number;
    readonly type: Text;
    /** An id of its own (guarded), or `undefined` for a ULID. */
    readonly id?: Text;
    readonly headers: readonly { readonly name: Text; readonly value: Text }[];
    readonly traceparent: boolean;
    readonly payload: { readonly shape: "object" | "string" | "array" | "number"; readonly text: Text };
    /** `none`; `far`, a day ahead; `lapsing`, within the first sweep's wait; `past`, already passed at write. */
    readonly expiry: "none" | "far" | "lapsing" | "past";
    /** The destination refuses this message, always, as a message's own fault (`InvalidParameter`). */
    readonly poison: boolean;
    readonly fill?: Fill;
}

/** A whole-call fault the destination (or the DLQ) answers once. */
export type CallFault = "InternalError" | "Throttled" | "AcceptThenReset";

/** One generated case. */
export interface EdgeCase {
    readonly destination: DestinationKind;
    readonly fifo: boolean;
    readonly writer: WriterMode;
    /** The claim check's threshold in bytes, or `undefined`: no claim check. */
    readonly claimCheckThreshold?: number;
    readonly partitions: readonly Text[];
    readonly keys: readonly Text[];
    readonly messages: readonly MessageSpec[];
    /** `each`: one write per message; `together`: one write of all (with a business item). */
    readonly writes: "each" | "together";
    readonly maxPublishAttempts: number;
    readonly claimLimit?: number;
    /** `lost`: the stream records never reach the publisher, the sweeper alone finishes them. */
    readonly stream: "delivered" | "lost";
    readonly faults: readonly CallFault[];
}

/** Classes of a field that travels as a FIFO group id on a FIFO writer, else any sendable text. */
const groupPattern = (fifo: boolean) =>
    fifo ? pattern(ASCII_CLASSES, ["space", "latin"]) : pattern(SENDABLE_CLASSES, ["refused"]);

/** A partition: up to a FIFO group id's 128 characters, or DynamoDB's 2048 bytes of partition key. */
const partitionText = (fifo: boolean): fc.Arbitrary<Text> =>
    fc.oneof(
        { arbitrary: text(groupPattern(fifo), { units: edgeLength(128) }), weight: 3 },
        { arbitrary: text(groupPattern(fifo), { bytes: edgeLength(2048, 2000) }), weight: 1 },
    );

const keyText = (fifo: boolean): fc.Arbitrary<Text> => text(groupPattern(fifo), { units: edgeLength(128) });

/** A type: up to the 128 UTF-16 units the writer takes (EventBridge's `DetailType`). */
const typeText: fc.Arbitrary<Text> = text(pattern(SENDABLE_CLASSES, ["refused"]), { units: edgeLength(128) });

/** An id: up to 128 printable ASCII characters (the FIFO deduplication id's rules). */
const idText: fc.Arbitrary<Text> = text(pattern(ASCII_CLASSES, ["space", "latin"]), { units: edgeLength(128) });

/** A header name: letters, digits, `_` and `-` (SNS's rules), short or near SNS's 256. */
const headerName: fc.Arbitrary<Text> = text(
    fc.array(fc.constantFrom("a", "Z", "9", "_", "-"), { minLength: 1, maxLength: 3 }),
    { units: edgeLength(256, 12, 40) },
);

const headerValue: fc.Arbitrary<Text> = text(pattern(SENDABLE_CLASSES, ["refused"]), {
    units: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1000, max: 20_000 })),
});

const payloadText: fc.Arbitrary<Text> = text(pattern(SENDABLE_CLASSES, ["refused"]), {
    units: fc.oneof(
        { arbitrary: fc.integer({ min: 0, max: 64 }), weight: 3 },
        { arbitrary: fc.constantFrom(1_000, 40_000, 120_000, 200_000, 250_000), weight: 1 },
    ),
});

/** The classes a fill may grow with: every sendable one, ASCII only for a FIFO group id or an id. */
function fillPattern(place: FillPlace, fifo: boolean): fc.Arbitrary<readonly string[]> {
    const ascii = place === "id" || (fifo && (place === "partition" || place === "orderingKey"));
    const classes: readonly CharacterClass[] = ascii ? ASCII_CLASSES : SENDABLE_CLASSES;
    return pattern(classes);
}

/** How far from the edge: mostly at it or inside it, sometimes just past it. */
const delta: fc.Arbitrary<number> = fc.oneof(
    { arbitrary: fc.constant(0), weight: 3 },
    { arbitrary: fc.integer({ min: -8, max: -1 }), weight: 3 },
    { arbitrary: fc.integer({ min: 1, max: 3 }), weight: 2 },
);

function fill(fifo: boolean, claimCheck: boolean): fc.Arbitrary<Fill> {
    const place = fc.oneof(
        { arbitrary: fc.constant<FillPlace>("payload"), weight: 4 },
        { arbitrary: fc.constant<FillPlace>("header"), weight: 4 },
        { arbitrary: fc.constant<FillPlace>("orderingKey"), weight: 2 },
        { arbitrary: fc.constantFrom<FillPlace>("partition", "type", "id"), weight: 2 },
    );
    return place.chain((p) =>
        fc.record({
            place: fc.constant(p),
            pattern: fillPattern(p, fifo),
            target:
                claimCheck && p === "payload"
                    ? fc.constantFrom<Fill["target"]>("writer", "offload")
                    : fc.constant<Fill["target"]>("writer"),
            delta,
        }),
    );
}

function message(fifo: boolean, claimCheck: boolean): fc.Arbitrary<MessageSpec> {
    return fc.record(
        {
            partition: fc.nat({ max: 1 }),
            key: fc.option(fc.nat({ max: 1 }), { nil: undefined }),
            type: typeText,
            id: fc.option(idText, { nil: undefined, freq: 2 }),
            headers: fc.array(fc.record({ name: headerName, value: headerValue }), { maxLength: 8 }),
            traceparent: fc.boolean(),
            payload: fc.record({
                shape: fc.constantFrom("object", "string", "array", "number"),
                text: payloadText,
            }),
            expiry: fc.constantFrom("none", "none", "none", "none", "far", "far", "lapsing", "lapsing", "past"),
            poison: fc.oneof({ arbitrary: fc.constant(false), weight: 6 }, { arbitrary: fc.constant(true), weight: 1 }),
            fill: fc.option(fill(fifo, claimCheck), { nil: undefined, freq: 4 }),
        },
        { requiredKeys: ["partition", "type", "headers", "traceparent", "payload", "expiry", "poison"] },
    );
}

/**
 * A plain message grown to the writer's edge by its payload (or a header) and stopped there or a few characters
 * inside: 4 or 5 of them in one batch carry more than SQS's 1 MiB and EventBridge's 1,000,000 bytes per call.
 */
function crowdMessage(): fc.Arbitrary<MessageSpec> {
    const short = text(pattern(["alnum"]), { units: fc.integer({ min: 1, max: 12 }) });
    return fc.record(
        {
            partition: fc.nat({ max: 1 }),
            key: fc.option(fc.nat({ max: 1 }), { nil: undefined }),
            type: short,
            headers: fc.array(fc.record({ name: short, value: short }), { maxLength: 2 }),
            traceparent: fc.boolean(),
            payload: fc.constant({ shape: "object" as const, text: { pattern: ["a"], units: 0 } }),
            expiry: fc.constant("none" as const),
            poison: fc.oneof({ arbitrary: fc.constant(false), weight: 8 }, { arbitrary: fc.constant(true), weight: 1 }),
            fill: fc.record({
                place: fc.constantFrom<FillPlace>("payload", "payload", "header"),
                pattern: pattern(SENDABLE_CLASSES),
                target: fc.constant<Fill["target"]>("writer"),
                delta: fc.integer({ min: -8, max: 0 }),
            }),
        },
        { requiredKeys: ["partition", "type", "headers", "traceparent", "payload", "expiry", "poison", "fill"] },
    );
}

/** The destination, and whether it is FIFO (an SNS FIFO topic or an SQS FIFO queue; a bus never is). */
const destination = fc.constantFrom<{ destination: DestinationKind; fifo: boolean }>(
    { destination: "sns", fifo: false },
    { destination: "sns", fifo: true },
    { destination: "sqs", fifo: false },
    { destination: "sqs", fifo: true },
    { destination: "eventbridge", fifo: false },
);

/**
 * The case's messages: 1 to 5 of any kind (`sameFill` gives every one the first one's fill, so several reach one edge
 * together), or, one case in five, a crowd of 4 or 5 at the edge in one batch.
 */
function messagesFor(fifoWriter: boolean, claimCheck: boolean): fc.Arbitrary<readonly MessageSpec[]> {
    const crowd = fc.array(crowdMessage(), { minLength: 4, maxLength: 5 });
    const any = fc
        .tuple(
            fc.array(message(fifoWriter, claimCheck), { minLength: 1, maxLength: 5 }),
            fc.oneof({ arbitrary: fc.constant(false), weight: 2 }, { arbitrary: fc.constant(true), weight: 1 }),
        )
        .map(([messages, sameFill]) =>
            sameFill && messages[0]!.fill !== undefined
                ? messages.map((m) => ({ ...m, fill: messages[0]!.fill }))
                : messages,
        );
    return fc.oneof({ arbitrary: any, weight: 4 }, { arbitrary: crowd, weight: 1 });
}

/** The arbitrary of a whole case. */
export function edgeCase(): fc.Arbitrary<EdgeCase> {
    return fc
        .tuple(
            destination,
            fc.constantFrom<WriterMode>("address", "address", "address+fifo", "bare"),
            fc.option(fc.oneof(fc.constantFrom(1024, 4096, 65_536, 262_144), fc.integer({ min: 1024, max: 262_144 })), {
                nil: undefined,
                freq: 3,
            }),
        )
        .chain(([{ destination: kind, fifo }, writer, claimCheckThreshold]) => {
            // The writer checks group ids when it knows the destination is FIFO, or is told to.
            const fifoWriter = writer === "address+fifo" || (writer === "address" && fifo);
            const claimCheck = claimCheckThreshold !== undefined;
            return fc.record(
                {
                    destination: fc.constant(kind),
                    fifo: fc.constant(fifo),
                    writer: fc.constant(writer),
                    claimCheckThreshold: fc.constant(claimCheckThreshold),
                    partitions: fc.array(partitionText(fifoWriter), { minLength: 2, maxLength: 2 }),
                    keys: fc.array(keyText(fifoWriter), { minLength: 2, maxLength: 2 }),
                    messages: messagesFor(fifoWriter, claimCheck),
                    writes: fc.constantFrom<EdgeCase["writes"]>("each", "each", "each", "together"),
                    maxPublishAttempts: fc.integer({ min: 1, max: 3 }),
                    claimLimit: fc.option(fc.constantFrom(1, 2), { nil: undefined, freq: 2 }),
                    stream: fc.constantFrom<EdgeCase["stream"]>("delivered", "delivered", "delivered", "lost"),
                    faults: fc.array(fc.constantFrom<CallFault>("InternalError", "Throttled", "AcceptThenReset"), {
                        maxLength: 2,
                    }),
                },
                {
                    requiredKeys: [
                        "destination",
                        "fifo",
                        "writer",
                        "partitions",
                        "keys",
                        "messages",
                        "writes",
                        "maxPublishAttempts",
                        "stream",
                        "faults",
                    ],
                },
            );
        });
}
