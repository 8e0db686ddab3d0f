/**
 * The fault scenarios: the faults that lose events in the relays people run today (the Streams article's
 * "Te va a morder", the GoBridge store's findings §12, the peers' issue threads), each at injection rate `rate`.
 * Every scenario publishes to the standard SNS topic but `sqs-fifo-mixed` and `eventbridge-mixed`, which run the
 * mixed faults against an SQS FIFO queue and an EventBridge bus, each in its own service's error codes. The last,
 * `expired-then-redriven`, ends with the operator's redrive.
 */
import type { ScenarioSpec } from "./scenario";

/** Every scenario, in the order they run. */
export const SCENARIOS: readonly ScenarioSpec[] = [
    {
        name: "sns-5xx-throttling",
        description:
            "PublishBatch and the DLQ's SendMessage answer 500 InternalError, Throttled or Throttling, or drop the connection",
        faults: (rate) => ({
            calls: [
                { kind: "InternalError", actions: ["PublishBatch", "SendMessage"], rate: rate / 3 },
                { kind: "Throttled", actions: ["PublishBatch"], rate: rate / 3 },
                { kind: "Throttling", actions: ["PublishBatch", "SendMessage"], rate: rate / 6 },
                { kind: "Reset", actions: ["PublishBatch"], rate: rate / 6 },
            ],
        }),
    },
    {
        name: "partial-batch",
        description:
            "single PublishBatch entries fail (InternalError, Throttled) while SNS accepts the entries after them",
        faults: (rate) => ({
            entries: [
                { code: "InternalError", rate: rate / 2 },
                { code: "Throttled", rate: rate / 2 },
            ],
        }),
    },
    {
        name: "accepted-then-timeout",
        description:
            "SNS (and the DLQ) accept the messages, then the answer never comes: the connection times out or resets",
        faults: (rate) => ({
            calls: [
                { kind: "AcceptThenTimeout", actions: ["PublishBatch", "SendMessage"], rate: rate / 2, holdMs: 30 },
                { kind: "AcceptThenReset", actions: ["PublishBatch", "SendMessage"], rate: rate / 2 },
            ],
        }),
    },
    {
        name: "killed-mid-batch",
        description:
            "a share of the publisher's invocations die after publishing or dead-lettering, at a random completion or expiry write that never answers",
        faults: (rate) => ({ kill: rate }),
    },
    {
        name: "sweeper-and-stream",
        description: "the sweeper runs in a loop on the same records as the stream publisher, with SNS entry faults",
        faults: (rate) => ({ sweeperDuringRun: true, entries: [{ code: "InternalError", rate }] }),
    },
    {
        name: "dynamodb-throttling",
        description:
            "DynamoDB throttles, cancels transactions for conflicts, leaves batch reads unprocessed and loses answers after applying (fake client: DynamoDB Local cannot)",
        faults: (rate) => ({
            dynamo: { throttle: rate / 2, conflict: rate / 4, lostAnswer: rate / 4, unprocessed: rate },
        }),
    },
    {
        name: "stream-records-lost",
        description:
            "stream records expire before the relay reads them (24 h retention, a disabled mapping): only the sweeper can deliver them",
        faults: (rate) => ({ streamLoss: rate }),
    },
    {
        name: "mapping-redelivery",
        description:
            "the mapping redelivers whole batches the handler had processed (a timeout after the work, a lost answer)",
        faults: (rate) => ({ redeliver: rate }),
    },
    {
        name: "poison",
        description:
            "one bad record or setting among healthy ones: poisoned key heads and foreign rows holding U+FFFF (only the DLQ can take them, escaped), ids reused across partitions, a second writer whose clock runs 2 s ahead, and a DLQ that fails most sends",
        faults: (rate) => ({
            calls: [{ kind: "InternalError", actions: ["SendMessage"], rate: Math.min(0.9, rate * 6) }],
            entries: [{ code: "InternalError", rate: rate / 2 }],
            poisonMix: { writerSkewMs: 2_000, reuseRate: rate },
        }),
    },
    {
        name: "everything-at-once",
        description: "all of the above together, sharing the rate",
        faults: (rate) => ({
            sweeperDuringRun: true,
            calls: [
                { kind: "InternalError", actions: ["PublishBatch", "SendMessage"], rate: rate / 5 },
                { kind: "AcceptThenTimeout", actions: ["PublishBatch"], rate: rate / 5, holdMs: 30 },
            ],
            entries: [{ code: "Throttled", rate: rate / 5 }],
            kill: rate / 4,
            dynamo: { throttle: rate / 10, conflict: rate / 10, lostAnswer: rate / 10 },
            redeliver: rate / 5,
            streamLoss: rate / 5,
        }),
    },
    {
        name: "skew",
        // Its first keyed write the correct writer makes behind a FENCE set ahead is message 26 (workload.ts, skewMessage).
        minMessages: 27,
        description:
            "a writer whose clock runs 3 h ahead (its keyed writes set FENCEs 3 h ahead, so the correct writer's later keyed writes there are accepted stamped 3 h ahead, after the fast records of their key, and the records of both wait in ClaimIndex stamped 3 h ahead), 8 partitions that never drain (undecodable items, rows a live relay holds, key tails behind a held head) for a maxPartitionsPerRun of 5, rows an older writer left with status \"\", and half the partitions' stream records lost; every healthy partition is delivered by the sweeper within ⌈N / 5⌉ runs, N the partitions with a due record at the first run (+0: the recovery clock steps past sweepAfter, and a record stamped ahead is due at once)",
        faults: (rate) => ({
            entries: [{ code: "InternalError", rate: rate / 2 }],
            maxPartitionsPerRun: 5,
            skewMix: { writerAheadMs: 3 * 3_600_000, stuckPartitions: 8, streamLossShare: 0.5 },
        }),
    },
    {
        name: "sqs-fifo-mixed",
        description:
            "the mixed faults against an SQS FIFO queue as the destination, in SQS's codes: SendMessageBatch answers 500 InternalError or RequestThrottled, or accepts and never answers; single entries fail (InternalError, and ThrottlingException flagged as the sender's fault); the DLQ's SendMessage fails; invocations and sweeps killed, DynamoDB faults, whole-batch redelivery and lost stream records",
        destination: { kind: "sqs", fifo: true },
        faults: (rate) => ({
            sweeperDuringRun: true,
            calls: [
                { kind: "Error", code: "InternalError", status: 500, actions: ["SendMessageBatch"], rate: rate / 6 },
                { kind: "Error", code: "RequestThrottled", status: 400, actions: ["SendMessageBatch"], rate: rate / 6 },
                { kind: "AcceptThenTimeout", actions: ["SendMessageBatch"], rate: rate / 6, holdMs: 30 },
                { kind: "InternalError", actions: ["SendMessage"], rate: rate / 5 },
            ],
            entries: [
                { actions: ["SendMessageBatch"], code: "InternalError", senderFault: false, rate: rate / 6 },
                { actions: ["SendMessageBatch"], code: "ThrottlingException", senderFault: true, rate: rate / 6 },
            ],
            kill: rate / 4,
            dynamo: { throttle: rate / 10, conflict: rate / 10, lostAnswer: rate / 10 },
            redeliver: rate / 5,
            streamLoss: rate / 5,
        }),
    },
    {
        name: "eventbridge-mixed",
        description:
            "the mixed faults against an EventBridge bus (the fault server's stand-in, routed to the consumer's queue), in EventBridge's codes: the first DescribeEventBus is throttled; PutEvents answers 500 InternalException or ThrottlingException, or accepts and never answers; single entries fail (InternalFailure, ThrottlingException); the DLQ's SendMessage fails; invocations and sweeps killed, DynamoDB faults, whole-batch redelivery and lost stream records. A bus keeps no order: inversions are counted in the order the publisher put the events",
        destination: { kind: "eventbridge" },
        faults: (rate) => ({
            sweeperDuringRun: true,
            calls: [
                { kind: "Error", code: "ThrottlingException", status: 400, actions: ["DescribeEventBus"], times: 1 },
                { kind: "Error", code: "InternalException", status: 500, actions: ["PutEvents"], rate: rate / 6 },
                { kind: "Error", code: "ThrottlingException", status: 400, actions: ["PutEvents"], rate: rate / 6 },
                { kind: "AcceptThenTimeout", actions: ["PutEvents"], rate: rate / 6, holdMs: 30 },
                { kind: "InternalError", actions: ["SendMessage"], rate: rate / 5 },
            ],
            entries: [
                { actions: ["PutEvents"], code: "InternalFailure", rate: rate / 6 },
                { actions: ["PutEvents"], code: "ThrottlingException", rate: rate / 6 },
            ],
            kill: rate / 4,
            dynamo: { throttle: rate / 10, conflict: rate / 10, lostAnswer: rate / 10 },
            redeliver: rate / 5,
            streamLoss: rate / 5,
        }),
    },
    {
        name: "expired-then-redriven",
        // Every 10th message (index ≡ 9) expires soon after its write; 40 give a few of them.
        minMessages: 40,
        description:
            "every 10th message expires 20 s after its write and each of its completions is throttled while the faults last, so it is published and then dead-lettered as expired by the recovery's sweeper (issue 33's redrive case), with single PublishBatch entries failing and the poison refused; then the operator redrives the DLQ (the causes fixed: the poison publishes too) and the sweeper delivers what was redriven, each event under its own identity, so the inbox applies none twice",
        faults: (rate) => ({ redrive: true, entries: [{ code: "InternalError", rate: rate / 2 }] }),
    },
];
