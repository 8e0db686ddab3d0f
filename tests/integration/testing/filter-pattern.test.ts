import assert from "node:assert/strict";
import { ATTR, STREAM_FILTER_PATTERN, streamFilterPatternJson } from "../../../runtime/schema";
import { idGuardItem, idGuardKey } from "../../../runtime/record/id-guard";
import { isOutboxError } from "../../../runtime/errors";
import { TYPE, buildOutbox } from "../../support/component-harness";
import {
    matchesAnyFilterPattern,
    matchesFilterPattern,
    validateFilterPattern,
    type FilterPattern,
} from "../../../runtime/testing/filter-pattern";

/** A Lambda-shaped stream record (wire attribute values), as the local mapping produces them. */
function record(eventName: string, sk: string | undefined, newImage: boolean): Record<string, unknown> {
    const keys = sk === undefined ? { PK: { S: "ORDER#1" } } : { PK: { S: "ORDER#1" }, SK: { S: sk } };
    return {
        eventID: "e1",
        eventName,
        eventVersion: "1.1",
        eventSource: "aws:dynamodb",
        awsRegion: "ddblocal",
        eventSourceARN: "arn:aws:dynamodb:ddblocal:000000000000:table/t/stream/x",
        dynamodb: {
            ApproximateCreationDateTime: 1796012100,
            Keys: keys,
            ...(newImage ? { NewImage: { ...keys, status: { S: "pending" }, tags: { SS: ["a", "b"] } } } : {}),
            SequenceNumber: "100",
            SizeBytes: 40,
            StreamViewType: "NEW_IMAGE",
        },
    };
}

const outboxPattern = STREAM_FILTER_PATTERN as unknown as FilterPattern;

describe("local filter pattern matcher", () => {
    describe("the outbox filter from schema.ts", () => {
        it("matches an INSERT of an outbox record", () => {
            assert.equal(matchesFilterPattern(outboxPattern, record("INSERT", "OUTBOX#1", true)), true);
        });
        it("does not match an INSERT of a business item (ORDER#1)", () => {
            assert.equal(matchesFilterPattern(outboxPattern, record("INSERT", "ORDER#1", true)), false);
        });
        it("does not match a MODIFY of an outbox record (claims, completions)", () => {
            assert.equal(matchesFilterPattern(outboxPattern, record("MODIFY", "OUTBOX#1", true)), false);
        });
        it("does not match a REMOVE, which has no NewImage", () => {
            assert.equal(matchesFilterPattern(outboxPattern, record("REMOVE", "OUTBOX#1", false)), false);
        });
        it("does not match the FENCE row", () => {
            assert.equal(matchesFilterPattern(outboxPattern, record("INSERT", "FENCE", true)), false);
        });
        it("does not match the INSERT of an id guard row (PK OUTBOX_ID#<id>, SK ID), whose id may itself look like a record key", () => {
            const guard = record("INSERT", idGuardKey("OUTBOX#evt-1#sns")[ATTR.sk]!.S!, true);
            const dynamodb = guard.dynamodb as { Keys: Record<string, unknown>; NewImage: Record<string, unknown> };
            dynamodb.Keys = idGuardKey("OUTBOX#evt-1#sns");
            dynamodb.NewImage = {
                ...idGuardItem({
                    recordId: "OUTBOX#evt-1#sns",
                    partition: "ORDER#1",
                    bindingId: "sns",
                    createdAt: 1,
                    expiresAt: 0,
                    graceSeconds: 3600,
                }),
            };
            assert.equal(matchesFilterPattern(outboxPattern, guard), false);
        });
        it("is the pattern the component serializes on its stream mapping (built under the mocks)", async () => {
            const mapping = (await buildOutbox("filterpattern")).one(TYPE.mapping);
            assert.deepEqual(mapping.inputs.filterCriteria, { filters: [{ pattern: streamFilterPatternJson() }] });
            const serialized: unknown = JSON.parse(mapping.inputs.filterCriteria.filters[0].pattern);
            assert.deepEqual(serialized, outboxPattern);
            validateFilterPattern(serialized); // the local mapping accepts it (and narrows it for the matcher)
            assert.equal(matchesFilterPattern(serialized, record("INSERT", "OUTBOX#1", true)), true);
            assert.equal(matchesFilterPattern(serialized, record("MODIFY", "OUTBOX#1", true)), false);
        });
    });

    describe("operators", () => {
        const insert = record("INSERT", "OUTBOX#1", true);
        const cases: [string, FilterPattern, unknown, boolean][] = [
            ["exact value in a list", { eventName: ["MODIFY", "INSERT"] }, insert, true],
            ["exact value not in the list", { eventName: ["MODIFY", "REMOVE"] }, insert, false],
            ["nested exact value", { dynamodb: { NewImage: { status: { S: ["pending"] } } } }, insert, true],
            ["nested exact value differs", { dynamodb: { NewImage: { status: { S: ["completed"] } } } }, insert, false],
            ["number equals number", { dynamodb: { SizeBytes: [40] } }, insert, true],
            ["number does not equal its string", { dynamodb: { SequenceNumber: [100] } }, insert, false],
            ["prefix", { dynamodb: { Keys: { PK: { S: [{ prefix: "ORDER#" }] } } } }, insert, true],
            ["prefix mismatch", { dynamodb: { Keys: { PK: { S: [{ prefix: "USER#" }] } } } }, insert, false],
            [
                "prefix never matches a number",
                { dynamodb: { ApproximateCreationDateTime: [{ prefix: "1796" }] } },
                insert,
                false,
            ],
            ["suffix", { dynamodb: { Keys: { SK: { S: [{ suffix: "#1" }] } } } }, insert, true],
            ["equals-ignore-case", { eventName: [{ "equals-ignore-case": "insert" }] }, insert, true],
            ["anything-but a value", { eventName: [{ "anything-but": "REMOVE" }] }, insert, true],
            ["anything-but the value itself", { eventName: [{ "anything-but": ["INSERT", "MODIFY"] }] }, insert, false],
            [
                "anything-but prefix",
                { dynamodb: { Keys: { SK: { S: [{ "anything-but": { prefix: "OUTBOX#" } }] } } } },
                insert,
                false,
            ],
            [
                "anything-but needs the field",
                { dynamodb: { OldImage: { SK: { S: [{ "anything-but": "x" }] } } } },
                insert,
                false,
            ],
            [
                "exists true on a present leaf",
                { dynamodb: { NewImage: { status: { S: [{ exists: true }] } } } },
                insert,
                true,
            ],
            [
                "exists true on a missing leaf",
                { dynamodb: { NewImage: { claimed_by: { S: [{ exists: true }] } } } },
                insert,
                false,
            ],
            [
                "exists true on a map is not a leaf",
                { dynamodb: { NewImage: { status: [{ exists: true }] } } },
                insert,
                false,
            ],
            [
                "exists false on a missing leaf",
                { dynamodb: { NewImage: { claimed_by: { S: [{ exists: false }] } } } },
                insert,
                true,
            ],
            [
                "exists false under a missing NewImage",
                { dynamodb: { NewImage: { SK: { S: [{ exists: false }] } } } },
                record("REMOVE", "OUTBOX#1", false),
                true,
            ],
            [
                "exists false on a present leaf",
                { dynamodb: { NewImage: { status: { S: [{ exists: false }] } } } },
                insert,
                false,
            ],
            ["any element of an array value", { dynamodb: { NewImage: { tags: { SS: ["b"] } } } }, insert, true],
            ["no element of an array value", { dynamodb: { NewImage: { tags: { SS: ["c"] } } } }, insert, false],
            ["a pattern key missing from the record", { userIdentity: { type: ["Service"] } }, insert, false],
        ];
        for (const [name, pattern, event, expected] of cases) {
            it(`${name} → ${expected ? "match" : "no match"}`, () => {
                validateFilterPattern(pattern);
                assert.equal(matchesFilterPattern(pattern, event), expected);
            });
        }
        it("ORs a list of patterns and treats an empty list as match-all", () => {
            const insert2 = record("INSERT", "ORDER#1", true);
            assert.equal(
                matchesAnyFilterPattern([{ eventName: ["MODIFY"] }, { eventName: ["INSERT"] }], insert2),
                true,
            );
            assert.equal(
                matchesAnyFilterPattern([{ eventName: ["MODIFY"] }, { eventName: ["REMOVE"] }], insert2),
                false,
            );
            assert.equal(matchesAnyFilterPattern([], insert2), true);
        });
    });

    describe("validation", () => {
        const bad: [string, unknown, RegExp][] = [
            [
                "a leaf that is not an array",
                { eventName: "INSERT" },
                /at eventName: a pattern value must be an object or an array.*write \["x"\], not "x"/,
            ],
            ["an empty leaf array", { eventName: [] }, /at eventName: a leaf array must hold at least one alternative/],
            [
                "an unsupported operator",
                { dynamodb: { SizeBytes: [{ numeric: [">", 1] }] } },
                /at dynamodb\.SizeBytes: operator "numeric" is not supported.*supported: prefix, suffix, equals-ignore-case, anything-but, exists/,
            ],
            ["$or", { $or: [{ eventName: ["INSERT"] }] }, /at \$or: "\$or" is not supported/],
            ["prefix on a number", { eventName: [{ prefix: 1 }] }, /"prefix" takes a string \(got \{"prefix":1\}\)/],
            ["exists with a string", { eventName: [{ exists: "yes" }] }, /"exists" takes true or false/],
            ["two operators in one object", { eventName: [{ prefix: "a", suffix: "b" }] }, /exactly one key/],
            ["anything-but with null", { eventName: [{ "anything-but": null }] }, /"anything-but" takes a value/],
            ["not an object", "INSERT", /at \(root\): a filter pattern must be a JSON object/],
        ];
        for (const [name, pattern, message] of bad) {
            it(`fails on ${name}`, () => {
                assert.throws(
                    () => validateFilterPattern(pattern),
                    (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && message.test(err.message),
                );
            });
        }
    });
});
