/**
 * The SDK error mapping (reference §6.3). Pure: the errors are built the way the SDK builds them.
 */
import {
    InternalServerError,
    ProvisionedThroughputExceededException,
    RequestLimitExceeded,
    ResourceNotFoundException,
} from "@aws-sdk/client-dynamodb";
import * as assert from "node:assert/strict";
import fc from "fast-check";
import { OutboxError } from "../../../runtime/errors";
import {
    AWS_RETRYABLE_ERRORS,
    classifyAwsError,
    isRecognizedAwsError,
    isRetryableAwsError,
    wrapAwsError,
} from "../../../runtime/store";
import { callSiteMessage } from "../../../runtime/store/aws-errors";
import { cancelled } from "../../support/store/fake-client";

const named = (name: string, message = "boom") => Object.assign(new Error(message), { name });

describe("AWS error mapping (§6.3)", () => {
    it("maps cancellation reason codes first, in order", () => {
        assert.equal(classifyAwsError(cancelled("None", "ProvisionedThroughputExceeded")), "THROTTLED");
        assert.equal(classifyAwsError(cancelled("ThrottlingError")), "THROTTLED");
        assert.equal(classifyAwsError(cancelled("RequestLimitExceeded")), "THROTTLED");
        assert.equal(classifyAwsError(cancelled("ValidationError")), "INVALID_PAYLOAD");
        assert.equal(classifyAwsError(cancelled("ItemCollectionSizeLimitExceeded")), "INVALID_PAYLOAD");
        assert.equal(classifyAwsError(cancelled("InternalServerError")), "UNAVAILABLE");
        assert.equal(classifyAwsError(cancelled("AccessDenied")), "NOT_AUTHORIZED");
        assert.equal(
            classifyAwsError(cancelled("ValidationError", "ThrottlingError")),
            "INVALID_PAYLOAD",
            "the first matching code wins",
        );
    });

    it("then the SDK error class", () => {
        assert.equal(classifyAwsError(new ResourceNotFoundException({ message: "x", $metadata: {} })), "NOT_FOUND");
        assert.equal(
            classifyAwsError(new ProvisionedThroughputExceededException({ message: "x", $metadata: {} })),
            "THROTTLED",
        );
        assert.equal(classifyAwsError(new RequestLimitExceeded({ message: "x", $metadata: {} })), "THROTTLED");
        assert.equal(classifyAwsError(new InternalServerError({ message: "x", $metadata: {} })), "UNAVAILABLE");
        assert.equal(
            classifyAwsError(named("ValidationException", "Item size has exceeded the maximum allowed size")),
            "INVALID_PAYLOAD",
        );
    });

    it("a read of a backfilling index is transient UNAVAILABLE, not the permanent ValidationException class (this port's rule)", () => {
        // The text DynamoDB sends when a Query names a GSI that is still backfilling; it passes once the index is ACTIVE.
        const backfilling = named("ValidationException", "Cannot read from backfilling global secondary index");
        assert.equal(classifyAwsError(backfilling), "UNAVAILABLE");
        const wrapped = wrapAwsError(backfilling, "outbox claim query failed", { partition: "P" }) as OutboxError;
        assert.deepEqual([wrapped.code, wrapped.transient, wrapped.cause], ["UNAVAILABLE", true, backfilling]);
        // A write whose index key has the wrong type while the index backfills is a bad value: it stays permanent.
        assert.equal(
            classifyAwsError(
                named(
                    "ValidationException",
                    "One or more parameter values were invalid: Schema violation against backfilling index",
                ),
            ),
            "INVALID_PAYLOAD",
        );
    });

    it("then the error text, case-insensitively", () => {
        assert.equal(classifyAwsError(named("ThrottlingException")), "THROTTLED");
        assert.equal(classifyAwsError(new Error("Rate exceeded")), "THROTTLED");
        assert.equal(
            classifyAwsError(named("ExpiredTokenException", "The security token included in the request is expired")),
            "TEMPORARY_AUTH_FAILURE",
        );
        assert.equal(classifyAwsError(named("UnrecognizedClientException", "InvalidClientTokenId")), "NOT_AUTHORIZED");
        assert.equal(classifyAwsError(named("AccessDeniedException")), "NOT_AUTHORIZED");
        assert.equal(
            classifyAwsError(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8000"), { code: "ECONNREFUSED" })),
            "CONNECTION_LOST",
        );
        assert.equal(classifyAwsError(new Error("read ECONNRESET")), "CONNECTION_LOST");
        assert.equal(classifyAwsError(new Error("getaddrinfo ENOTFOUND dynamodb.nowhere")), "CONNECTION_LOST");
        assert.equal(classifyAwsError(named("ServiceUnavailable")), "UNAVAILABLE");
    });

    it("defaults to UNAVAILABLE", () => {
        assert.equal(classifyAwsError(new Error("something odd")), "UNAVAILABLE");
        assert.equal(classifyAwsError("a string"), "UNAVAILABLE");
    });

    it("wraps with the call-site message, the SDK error as cause, context, and the code's transient class", () => {
        const sdk = new ProvisionedThroughputExceededException({ message: "slow down", $metadata: {} });
        const wrapped = wrapAwsError(sdk, "outbox claim query failed", { partition: "P" }) as OutboxError;
        assert.ok(wrapped instanceof OutboxError);
        assert.deepEqual(
            [wrapped.code, wrapped.message, wrapped.transient, wrapped.cause, wrapped.context.partition],
            ["THROTTLED", "outbox claim query failed", true, sdk, "P"],
        );
        assert.equal(String(wrapped), "OutboxError [THROTTLED]: outbox claim query failed: slow down");
        const rejected = wrapAwsError(named("ValidationException"), "m") as OutboxError;
        assert.equal(rejected.transient, false);
    });

    it("returns an abort and an OutboxError unchanged (never reclassified)", () => {
        const abort = named("AbortError", "This operation was aborted");
        assert.equal(wrapAwsError(abort, "m"), abort);
        const mine = new OutboxError("STALE_FENCING_TOKEN", "x");
        assert.equal(wrapAwsError(mine, "m"), mine);
    });

    describe("an AWS error the store does not recognize (issue 34)", () => {
        it("names itself in the message and context and is not transient: bad input does not spin a retry-on-transient loop", () => {
            // What the SDK's serializer throws on a DocumentClient-shaped item sent as AttributeValues.
            const serializer = new TypeError("Cannot read properties of undefined (reading '0')");
            const odd = named("SerializationException", "Start of structure or map found where not expected");
            for (const [err, name] of [
                [odd, "SerializationException"],
                [serializer, "TypeError"],
                [new Error("something odd"), "Error"],
            ] as const) {
                assert.equal(isRecognizedAwsError(err), false);
                const wrapped = wrapAwsError(err, "outbox write failed", { table: "T" }) as OutboxError;
                assert.deepEqual(
                    [wrapped.code, wrapped.transient, wrapped.context.awsError, wrapped.context.unrecognized],
                    ["UNAVAILABLE", false, name, true],
                );
                assert.match(
                    wrapped.message,
                    new RegExp(
                        `^outbox write failed \\(an AWS error this store does not recognize: ${name}; not one AWS documents as retryable`,
                    ),
                );
                assert.equal(wrapped.context.table, "T");
            }
        });

        it("is transient when the SDK would retry it: a listed name, a Node socket code, $retryable, $fault server, a 5xx or 429 status", () => {
            const cases: unknown[] = [
                named("TooManyRequestsException"),
                named("TransactionInProgressException"),
                named("RequestTimeoutException"),
                Object.assign(new Error("socket hang up"), { code: "EPIPE" }),
                Object.assign(named("Weird"), { $retryable: {} }),
                Object.assign(named("Weird"), { $fault: "server" }),
                Object.assign(named("Weird"), { $metadata: { httpStatusCode: 502 } }),
                Object.assign(named("Weird"), { $metadata: { httpStatusCode: 429 } }),
            ];
            for (const err of cases) {
                const wrapped = wrapAwsError(err, "m") as OutboxError;
                assert.equal(wrapped.transient, true, String(err));
            }
            // A client fault with a 400 is not.
            const client = Object.assign(named("Weird"), { $fault: "client", $metadata: { httpStatusCode: 400 } });
            assert.equal((wrapAwsError(client, "m") as OutboxError).transient, false);
        });

        it("property: a name in the retryable list is transient; an unknown name with no server fault is not", () => {
            const listed = [...AWS_RETRYABLE_ERRORS.throttlingNames, ...AWS_RETRYABLE_ERRORS.transientNames].filter(
                (n) => n !== "TimeoutError", // an abort's name: returned unchanged, never wrapped
            );
            fc.assert(
                fc.property(fc.constantFrom(...listed), fc.string(), (name, message) => {
                    assert.equal(isRetryableAwsError(named(name, message)), true);
                    assert.equal((wrapAwsError(named(name, message), "m") as OutboxError).transient, true);
                }),
            );
            const unknownName = fc
                .string({ minLength: 1, maxLength: 30 })
                .map((s) => `Odd${s.replace(/[^A-Za-z]/g, "")}Exception`)
                .filter((n) => !isRecognizedAwsError(named(n, "")) && !isRetryableAwsError(named(n, "")));
            fc.assert(
                fc.property(
                    unknownName,
                    fc.constantFrom(undefined, 200, 400, 403, 404, 413),
                    fc.constantFrom(undefined, "client"),
                    (name, status, fault) => {
                        const err = Object.assign(named(name, "no rule matches this text"), {
                            ...(status === undefined ? {} : { $metadata: { httpStatusCode: status } }),
                            ...(fault === undefined ? {} : { $fault: fault }),
                        });
                        const wrapped = wrapAwsError(err, "m") as OutboxError;
                        assert.deepEqual([wrapped.transient, wrapped.context.awsError], [false, name]);
                    },
                ),
            );
        });
    });

    describe("callSiteMessage: the message without the unrecognized note, for a caller that explains the cause", () => {
        it("drops the note from an unrecognized error, transient or not, and leaves every other message alone", () => {
            for (const name of ["WeirdException", "ThrottlingException", "ValidationException"]) {
                const wrapped = wrapAwsError(Object.assign(new Error("odd"), { name }), "describe table failed");
                assert.ok(wrapped instanceof OutboxError);
                assert.equal(callSiteMessage(wrapped), "describe table failed", name);
            }
            const weird = wrapAwsError(Object.assign(new Error("odd"), { name: "WeirdException" }), "m");
            assert.ok(weird instanceof OutboxError);
            assert.match(weird.message, /does not recognize: WeirdException/, "the note itself stays in the message");
            const plain = new OutboxError("UNAVAILABLE", "m (a parenthesis of its own)", {
                context: { unrecognized: true, awsError: "X" },
            });
            assert.equal(callSiteMessage(plain), plain.message, "a message without the note is returned whole");
        });
    });
});
