/**
 * The fault suite's inbox consumer (tests/support/faults/inbox-consumer.ts) on its own: its checker fails on each
 * problem it looks for (a checker that cannot fail would make every scenario pass), and a small run on DynamoDB
 * Local, with the relay's duplicates in the topic and every redelivery fault at 30%, applies each event once.
 */
import assert from "node:assert/strict";
import type { RecordedMessage } from "../../../dev/emulators/aws-fault-server";
import { dynamoClient } from "../../support/dynamodb";
import { consumeOnInbox, consumerHolds, consumerLine, type ConsumerReport } from "../../support/faults/inbox-consumer";

const clean: ConsumerReport = {
    expected: 3,
    appliedOnce: 3,
    appliedTwice: [],
    missing: [],
    unexpected: [],
    markers: 3,
    deliveries: 5,
    invocations: 2,
    redelivered: 1,
    dynamoFaults: 1,
    failures: 1,
    poison: 1,
    poisonDeadLettered: 1,
    leftInQueue: 0,
};

function topicMessage(id: string, n: number): RecordedMessage {
    return {
        service: "sns",
        destination: "arn:aws:sns:eu-west-1:111111111111:events",
        destinationName: "events",
        messageId: `sns-${n}`,
        body: JSON.stringify({ n }),
        attributes: {
            "outbox.id": { dataType: "String", stringValue: id },
            "outbox.type": { dataType: "String", stringValue: "OrderUpdated" },
        },
        action: "PublishBatch",
        callNumber: n,
        acknowledged: true,
    };
}

describe("fault suite: the inbox consumer", function () {
    this.timeout(120_000);

    it("the checker passes a clean report and fails each problem, naming it on the line", () => {
        assert.equal(consumerHolds(clean), true);
        assert.doesNotMatch(consumerLine(clean), /INBOX-PROBLEMS/);
        const broken: [Partial<ConsumerReport>, RegExp][] = [
            [{ appliedOnce: 2, appliedTwice: ["id-1"] }, /applied-twice id-1/],
            [{ appliedOnce: 2, missing: ["id-2"] }, /never-applied id-2/],
            [{ unexpected: ["id-9"] }, /unexpected id-9/],
            [{ markers: 2 }, /markers 2/],
            [{ poisonDeadLettered: 0 }, /poison-not-dead-lettered 1/],
            [{ leftInQueue: 4 }, /left-in-queue 4/],
        ];
        for (const [change, problem] of broken) {
            const report = { ...clean, ...change };
            assert.equal(consumerHolds(report), false, JSON.stringify(change));
            assert.match(consumerLine(report), problem);
        }
        assert.equal(consumerHolds({ ...clean, appliedOnce: 2 }), false, "fewer applied once than expected");
    });

    it("a run with the relay's duplicates and 30% faults applies each event once, and dead-letters the poison", async () => {
        const ddb = await dynamoClient();
        const topic = Array.from({ length: 40 }, (_, n) => topicMessage(`evt-${n % 30}`, n));
        const r = await consumeOnInbox(ddb, topic, { rate: 0.3, seed: 3, tag: "unit" });
        assert.ok(consumerHolds(r), consumerLine(r));
        assert.equal(r.expected, 30);
        assert.equal(r.poison, 3);
        assert.ok(r.redelivered > 0 && r.dynamoFaults > 0 && r.failures > 0, consumerLine(r));
        assert.ok(r.deliveries > topic.length + r.poison, "redeliveries and retries reached the handler");
    });
});
