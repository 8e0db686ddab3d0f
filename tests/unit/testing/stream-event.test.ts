import assert from "node:assert/strict";
import type { _Record } from "@aws-sdk/client-dynamodb-streams";
import { isOutboxError } from "../../../runtime/errors";
import { toLambdaStreamRecord } from "../../../runtime/testing/stream-event";

const streamArn = "arn:aws:dynamodb:ddblocal:000000000000:table/t/stream/2026-11-30T00:00:00.000";

describe("SDK stream record → Lambda event record", () => {
    it("turns every attribute type into its wire shape, binaries into base64, the date into epoch seconds", () => {
        const sdk: _Record = {
            eventID: "id-1",
            eventName: "INSERT",
            eventVersion: "1.1",
            eventSource: "aws:dynamodb",
            awsRegion: "ddblocal",
            dynamodb: {
                ApproximateCreationDateTime: new Date(1796012100_000),
                Keys: { PK: { S: "ORDER#1" }, SK: { S: "OUTBOX#1" } },
                NewImage: {
                    PK: { S: "ORDER#1" },
                    n: { N: "42" },
                    b: { B: new Uint8Array([1, 2, 255]) },
                    ss: { SS: ["a"] },
                    ns: { NS: ["1", "2"] },
                    bs: { BS: [new Uint8Array([0]), new Uint8Array([104, 105])] },
                    m: { M: { inner: { B: new Uint8Array([7]) }, flag: { BOOL: false } } },
                    l: { L: [{ NULL: true }, { S: "x" }] },
                },
                SequenceNumber: "000000000000000000123",
                SizeBytes: 99,
                StreamViewType: "NEW_IMAGE",
            },
        };
        assert.deepEqual(JSON.parse(JSON.stringify(toLambdaStreamRecord(sdk, streamArn))), {
            eventID: "id-1",
            eventName: "INSERT",
            eventVersion: "1.1",
            eventSource: "aws:dynamodb",
            awsRegion: "ddblocal",
            eventSourceARN: streamArn,
            dynamodb: {
                ApproximateCreationDateTime: 1796012100,
                Keys: { PK: { S: "ORDER#1" }, SK: { S: "OUTBOX#1" } },
                NewImage: {
                    PK: { S: "ORDER#1" },
                    n: { N: "42" },
                    b: { B: "AQL/" },
                    ss: { SS: ["a"] },
                    ns: { NS: ["1", "2"] },
                    bs: { BS: ["AA==", "aGk="] },
                    m: { M: { inner: { B: "Bw==" }, flag: { BOOL: false } } },
                    l: { L: [{ NULL: true }, { S: "x" }] },
                },
                SequenceNumber: "000000000000000000123",
                SizeBytes: 99,
                StreamViewType: "NEW_IMAGE",
            },
        });
    });

    it("renames the TTL identity fields as Lambda does", () => {
        const out = toLambdaStreamRecord(
            {
                eventName: "REMOVE",
                dynamodb: { Keys: { PK: { S: "p" } }, SequenceNumber: "1", SizeBytes: 1, StreamViewType: "NEW_IMAGE" },
                userIdentity: { Type: "Service", PrincipalId: "dynamodb.amazonaws.com" },
            },
            streamArn,
        );
        assert.deepEqual(out.userIdentity, { type: "Service", principalId: "dynamodb.amazonaws.com" });
        assert.equal("NewImage" in out.dynamodb, false);
    });

    it("fails on a record without a SequenceNumber, naming the record", () => {
        assert.throws(
            () => toLambdaStreamRecord({ eventID: "bad-1", eventName: "INSERT", dynamodb: { Keys: {} } }, streamArn),
            (err: unknown) =>
                isOutboxError(err, "INVALID_PAYLOAD") &&
                /stream record bad-1 has no dynamodb.SequenceNumber/.test(err.message),
        );
    });

    it("fails on an attribute value of no known type", () => {
        assert.throws(
            () =>
                toLambdaStreamRecord(
                    {
                        eventID: "e",
                        eventName: "INSERT",
                        dynamodb: { Keys: { PK: { $unknown: ["X", 1] } as never }, SequenceNumber: "1" },
                    },
                    streamArn,
                ),
            (err: unknown) =>
                isOutboxError(err, "INVALID_PAYLOAD") && /no known type \(keys: \$unknown\)/.test(err.message),
        );
    });
});
