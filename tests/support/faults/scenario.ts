/**
 * One fault scenario, end to end on real parts where they exist: a fresh outbox table on DynamoDB Local with its
 * real stream, the local event source mapping (Lambda's batching, rewind and retries) driving the real
 * `createPublisher` handler, the real `createSweeper`, and the AWS fault server (a fake, because no
 * emulator fails a PublishBatch entry or accepts a message and then loses the answer), which holds the scenario's
 * destination (`destination.ts`: the SNS topic, an SQS queue, or its EventBridge stand-in) and the DLQ. DynamoDB faults go through
 * the fake client of `faulty-dynamodb.ts`, because DynamoDB Local never throttles or conflicts.
 *
 * Phases: write the planned messages (sequential transactions of 1–10 messages, the mapping consuming as they
 * land) under the scenario's faults; drain the mapping; then recovery, as after an outage: faults off (poison
 * messages stay poison), the relay clock moved past the stale-claim window and `sweepAfter`, and the sweeper run
 * until no record is pending or claimed. Then the invariants. With a redrive mix, the operator's redrive follows:
 * the causes fixed (poison publishes now), every DLQ message redriven with `redriveDeadLetters`, and the sweeper run
 * until the redriven records are delivered. Then the inbox consumer gets everything the destination accepted.
 */
import type { AttributeValue, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBStreamsClient } from "@aws-sdk/client-dynamodb-streams";
import { SNSClient } from "@aws-sdk/client-sns";
import { SQSClient } from "@aws-sdk/client-sqs";
import { dateFollowsClock, LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../dev/emulators/dynamodb-local";
import {
    startAwsFaultServer,
    type CallFaultRule,
    type EntryFaultRule,
    type AwsFaultServer,
} from "../../../dev/emulators/aws-fault-server";
import {
    startLocalEventSourceMapping,
    type LocalInvocationContext,
} from "../../../runtime/testing/event-source-mapping";
import type {
    LambdaAttributeMap,
    LambdaStreamEvent,
    LambdaStreamHandlerResult,
} from "../../../runtime/testing/stream-event";
import type { Clock, Logger } from "../../../runtime/ports";
import { createPublisher } from "../../../runtime/relay/publisher";
import { ATTR, STATUS } from "../../../runtime/schema";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { HANDLER_LIMITS } from "../../../runtime/limits";
import { redriveDeadLetters } from "../../../runtime/writer/redrive";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { isOutboxError } from "../../../runtime/errors";
import type { NewOutboxRecord } from "../../../runtime/record/codec";
import { OutboxStore } from "../../../runtime/store";
import { dynamoClient, dynamoEndpoint } from "../dynamodb";
import { createOutboxTable, scanItems, scanRecordItems } from "../runtime/table";
import { localClientConfig } from "../local-aws-client";
import { faultDestination, type FaultDestination, type ScenarioDestination } from "./destination";
import { faultyDynamoClient, type DynamoFaultRates, type FaultyDynamoClient } from "./faulty-dynamodb";
import { consumeOnInbox, consumerHolds, consumerLine, type ConsumerReport } from "./inbox-consumer";
import { checkInvariants, type InvariantReport } from "./invariants";
import { faultDice, seededRandom } from "./random";
import {
    DeliveryTracker,
    dueCensus,
    fixedStreamLoss,
    plantStuckPartitions,
    putEmptyStatusRows,
    stuckChanges,
    type DueCensus,
    type SkewMix,
    type StuckItem,
} from "./skew";
import { EXPIRING_AFTER_MS, messageId, planMessages, transactions, type PlannedMessage } from "./workload";

/** The faults of one scenario at injection rate `rate`. */
export interface ScenarioFaults {
    /** Whole-call faults (SNS, SQS, EventBridge: each rule names its actions). @default [] */
    readonly calls?: readonly CallFaultRule[];
    /** Batch entry faults (PublishBatch unless a rule names other actions). @default [] */
    readonly entries?: readonly EntryFaultRule[];
    /** DynamoDB faults on the publisher's and sweeper's client. @default none */
    readonly dynamo?: DynamoFaultRates;
    /**
     * Probability, per 10 records an invocation carries (per sweep for the sweeper running during the run), that
     * it is killed at a random terminal write, after publishing or dead-lettering. @default 0
     */
    readonly kill?: number;
    /** Probability, per 10 records, that an invocation's answer rewinds to its first record, so the mapping redelivers the whole batch. @default 0 */
    readonly redeliver?: number;
    /** Probability that a stream record never reaches the publisher (trimmed after 24 h, or the mapping was disabled). @default 0 */
    readonly streamLoss?: number;
    /** Run the sweeper in a loop during the run, on the same records as the stream publisher. @default false */
    readonly sweeperDuringRun?: boolean;
    /** The `poison` scenario's writers and messages (see {@link PoisonMix}). @default undefined */
    readonly poisonMix?: PoisonMix;
    /** The sweeper's `maxPartitionsPerRun`. @default 200 (the sweeper's own default) */
    readonly maxPartitionsPerRun?: number;
    /** The `skew` scenario's writers, rows and partitions (see {@link SkewMix}). @default undefined */
    readonly skewMix?: SkewMix;
    /**
     * The `redrive` scenario: every 10th message expires {@link EXPIRING_AFTER_MS} after its write, and each of its
     * completions is throttled while the faults last, so it is published and left pending until the recovery's
     * sweeper dead-letters it as expired; then the DLQ is redriven and the relay delivers what was redriven.
     * @default false
     */
    readonly redrive?: boolean;
}

/** What the `poison` scenario adds on the writing side. */
export interface PoisonMix {
    /** A second writer, whose clock runs this many ms ahead, writes every other transaction. */
    readonly writerSkewMs: number;
    /** Probability, per transaction, that the app also tries to write a message reusing an id already written in another partition; every such write must be refused. */
    readonly reuseRate: number;
}

/** A named scenario. */
export interface ScenarioSpec {
    /** Short name, printed. */
    readonly name: string;
    /** What it injects. */
    readonly description: string;
    /** Where it publishes. @default the standard SNS topic */
    readonly destination?: ScenarioDestination;
    /**
     * The fewest messages its plan needs to inject what it checks; the run's total is split evenly, and a scenario
     * below this gets it from the others. @default 0
     */
    readonly minMessages?: number;
    /** The faults at injection rate `rate`. */
    faults(rate: number): ScenarioFaults;
}

/** The outcome of one scenario. */
export interface ScenarioResult extends InvariantReport {
    /** The scenario name. */
    readonly name: string;
    /** Where it published: `sns`, `sqs`, `sqs-fifo`, `eventbridge` (see {@link FaultDestination.label}). */
    readonly destination: string;
    /**
     * Whether the destination keeps each key's order for its consumers. On a bus (`false`), `inversions` counts the
     * order the publisher put the events in, which is all a bus's acceptance shows: EventBridge may deliver them in
     * any order.
     */
    readonly ordered: boolean;
    /** Records left pending or claimed after recovery. */
    readonly leftOver: number;
    /** Faults injected: SNS/SQS calls and entries, DynamoDB faults, killed invocations, forced redeliveries, lost stream records. */
    readonly injected: number;
    /** Publisher invocations and sweeps killed between publishing and completing. */
    readonly killed: number;
    /** Handler invocations that re-delivered records. */
    readonly mappingRetries: number;
    /** Records the mapping gave up on after its retries (left to the sweeper). */
    readonly mappingDiscarded: number;
    /** Sweeper runs in the recovery phase. */
    readonly recoverySweeps: number;
    /** Writes that reused an id already held in another partition. */
    readonly reuseAttempts: number;
    /** Of those, writes the writer accepted (each one can be dropped by a FIFO topic or a consumer deduplicating on the id). */
    readonly reuseAccepted: number;
    /** The consumer on the inbox, fed what the topic accepted, with redeliveries injected: its effects counted. */
    readonly consumer: ConsumerReport;
    /** With a skew mix: its accounting. */
    readonly skew?: SkewReport;
    /** With a redrive: what it did. */
    readonly redrive?: RedriveReport;
}

/** What the `redrive` scenario's redrive did. */
export interface RedriveReport {
    /** DLQ messages when the redrive began. */
    readonly deadLettered: number;
    /** Written back and deleted from the DLQ. */
    readonly redriven: number;
    /** A second DLQ message of a record already written back (a dead letter sent twice): only deleted. */
    readonly alreadyRedriven: number;
    /** Left in the DLQ as not redrivable, or failed. */
    readonly notRedrivable: number;
    readonly failed: number;
    /** Redriven records whose identity (`outbox.id`) is not the dead-lettered record's id (at most 20 listed). */
    readonly identityChanged: readonly string[];
    /** Redriven events the destination never accepted under their identity (at most 20 listed). */
    readonly undelivered: readonly string[];
    /** Records left pending or claimed after the redrive's delivery. */
    readonly leftOver: number;
    /** Sweeper runs that delivered the redriven records. */
    readonly sweeps: number;
}

/** What the `skew` scenario found, besides the invariants every scenario checks. */
export interface SkewReport {
    /** How far the fast writer's clock ran ahead, ms. */
    readonly aheadMs: number;
    /**
     * The correct writer's keyed messages written behind a FENCE the fast writer set hours ahead: each must be
     * accepted (a refusal fails the write, and the scenario with it), stamped ahead, delivered and in order.
     */
    readonly carriedWrites: number;
    /** Of those, the ones whose record is not stamped ahead of the correct writer's clock (or is not in the table). */
    readonly carriedNotAhead: readonly string[];
    /** Records the fast writer committed. */
    readonly fastRecords: number;
    /** Rows written with `status: ""`. */
    readonly emptyStatusRows: number;
    /** Partitions planted so that they never drain, and their items. */
    readonly stuckPartitions: number;
    readonly stuckRecords: number;
    /** Stuck items that are not as planted at the end (delivered, released, taken, gone). */
    readonly stuckChanged: readonly string[];
    /** Stuck items found on the topic or in the DLQ. */
    readonly stuckDelivered: readonly string[];
    /** Partitions whose stream records were all lost. */
    readonly streamLostPartitions: number;
    /** The sweeper's `maxPartitionsPerRun`. */
    readonly maxPartitionsPerRun: number;
    /** ClaimIndex at the first recovery run; undefined when recovery had nothing to do. */
    readonly census?: DueCensus;
    /** ⌈N / maxPartitionsPerRun⌉ + the runs until the last record is due. */
    readonly bound: number;
    /** Healthy partitions the sweeper had to deliver (a committed, deliverable record not on the topic when recovery began). */
    readonly sweptPartitions: number;
    /** The most recovery runs one of them took until all its records were on the topic. */
    readonly runsToDeliver: number;
    /** Those never delivered. */
    readonly undelivered: readonly string[];
}

/** Options of {@link runScenario}. */
export interface RunOptions {
    /** Messages to write. */
    readonly messages: number;
    /** Fault injection rate, 0 to 1. */
    readonly rate: number;
    /** RNG seed. @default 7 */
    readonly seed?: number;
    /** The logger of the publisher, the sweeper, their store and the mapping. @default silentLogger */
    readonly logger?: Logger;
    /** Where the handlers' EMF metric lines go. @default dropped */
    readonly writeMetrics?: (line: string) => void;
}

/** A clock that can be moved forward: `now()` is the wall clock plus an offset; `sleep` really waits. */
interface OffsetClock extends Clock {
    advance(ms: number): void;
}

function offsetClock(offsetMs = 0): OffsetClock {
    let offset = offsetMs;
    return {
        now: () => Date.now() + offset,
        sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.min(ms, 50))),
        advance: (ms) => {
            offset += ms;
        },
    };
}

const STALE_CLAIM_MS = 30_000;
const SWEEP_AFTER_MS = 1_000;
const RECOVERY_STEP_MS = STALE_CLAIM_MS + 5_000;
const MAX_PUBLISH_ATTEMPTS = 3;
/**
 * Recovery sweeps until nothing is left, or until this many sweeps in a row change nothing. A poisoned head holds
 * its key for `maxPublishAttempts` sweeps before the DLQ takes it (one attempt per run), so a key holding several
 * poison messages needs that many sweeps per message: the budget follows progress instead of a fixed count.
 */
const RECOVERY_SWEEPS_WITHOUT_PROGRESS = MAX_PUBLISH_ATTEMPTS + 2;
/** A hard stop for the recovery loop, whatever the progress. */
const MAX_RECOVERY_SWEEPS = 1_000;
/**
 * How long the run waits for the local mapping to drain the stream: a guard against a hung run, not a figure of
 * the relay (that is `npm run bench`). It grows with the scenario's size, because DynamoDB Local's CPU, not the
 * relay, sets the pace here, and a machine shared with other jobs slows it further: 60 ms per message, never
 * under 600 s.
 */
function drainTimeoutMs(messages: number): number {
    return Math.max(600_000, messages * 60);
}

/** Record items neither completed nor expired, outside `excluded` partitions (read raw: a planted item may not decode). */
function nonTerminal(items: readonly Record<string, AttributeValue>[], excluded: ReadonlySet<string>): number {
    return items.filter(
        (i) =>
            !excluded.has(i[ATTR.pk]?.S ?? "") &&
            i[ATTR.status]?.S !== STATUS.completed &&
            i[ATTR.status]?.S !== STATUS.expired,
    ).length;
}

/** The partition key of a stream record's `Keys`. */
function partitionOf(keys: LambdaAttributeMap): string {
    const pk = keys[ATTR.pk];
    return pk !== undefined && "S" in pk ? pk.S : "";
}

/** An invocation's chances of a per-invocation fault: one per 10 records (a PublishBatch worth). */
function perTenRecords(event: LambdaStreamEvent): number {
    return Math.ceil(event.Records.length / 10);
}

/** Where the planned messages are written from. */
interface Writers {
    /** The application's writer. */
    readonly writer: OutboxWriter;
    /** The writers' clock: an `expiring` message expires {@link EXPIRING_AFTER_MS} after it, at its write. */
    readonly clock: Clock;
    /** With a poison mix: the second writer, its clock ahead, taking every other transaction. */
    readonly skewed?: OutboxWriter;
    /** With a poison mix: the store, for foreign rows (written as an older or a Go writer would). */
    readonly store?: OutboxStore;
    /** With a skew mix: the writer whose clock runs hours ahead, for the messages planned as `fast`. */
    readonly fast?: OutboxWriter;
    /** With a skew mix: writes the messages planned as `legacy`, as raw rows with `status: ""`. */
    readonly legacy?: (run: readonly PlannedMessage[]) => Promise<void>;
    /** The destination's ARN, the foreign rows' address. */
    readonly address: string;
}

/** What {@link writeAll} did. */
interface Written {
    /** Writes reusing an id in another partition, and how many were accepted. */
    readonly attempts: number;
    readonly accepted: number;
}

/** A planned message as the store's Persist takes it: the row a Go writer leaves, characters unchecked. */
function foreignRecord(p: PlannedMessage, address: string): NewOutboxRecord {
    const m = p.message;
    return {
        partition: m.partition,
        recordId: m.id,
        bindingId: "sns",
        address,
        envelope: {
            id: m.id,
            subject: m.type,
            payload: JSON.stringify(m.payload),
            headers: { ...(m.headers ?? {}) },
            expiresAt: m.expiresAt?.getTime() ?? 0,
        },
        ...(m.orderingKey !== undefined ? { orderingKey: m.orderingKey } : {}),
    };
}

/**
 * Who writes a planned message: foreign, legacy and the application's writer take runs; each `SKEW#` message is
 * a write of its own.
 */
function writeKind(p: PlannedMessage): string {
    if (p.message.partition.startsWith("SKEW#")) return `skew ${p.index}`;
    return p.foreign === true ? "foreign" : (p.source ?? "writer");
}

/** Consecutive runs of one kind (see {@link writeKind}), in order. */
function runsOf(tx: readonly PlannedMessage[]): PlannedMessage[][] {
    const runs: PlannedMessage[][] = [];
    for (const p of tx) {
        const last = runs[runs.length - 1];
        if (last !== undefined && writeKind(last[0]!) === writeKind(p)) last.push(p);
        else runs.push([p]);
    }
    return runs;
}

/**
 * Write every planned message in transactions, in plan order. With a poison mix: foreign rows go through the
 * store, every other transaction through the skewed writer, and some transactions are followed by a write that
 * reuses an earlier id (one this writer wrote, so guarded) in another partition, which must be refused.
 */
async function writeAll(
    writers: Writers,
    planned: readonly PlannedMessage[],
    random: () => number,
    mix: PoisonMix | undefined,
): Promise<Written> {
    let attempts = 0;
    let accepted = 0;
    const written: PlannedMessage[] = [];
    let n = 0;
    for (const tx of transactions(planned, random)) {
        const writer = writers.skewed !== undefined && n % 2 === 1 ? writers.skewed : writers.writer;
        n += 1;
        for (const run of runsOf(tx)) {
            const first = run[0]!;
            if (first.foreign === true && writers.store !== undefined)
                await writers.store.persist(run.map((p) => foreignRecord(p, writers.address)));
            else if (first.source === "legacy" && writers.legacy !== undefined) await writers.legacy(run);
            else {
                await (first.source === "fast" && writers.fast !== undefined ? writers.fast : writer).write({
                    messages: run.map((p) =>
                        p.expiring === true
                            ? { ...p.message, expiresAt: new Date(writers.clock.now() + EXPIRING_AFTER_MS) }
                            : p.message,
                    ),
                });
            }
        }
        // Only ids the writer wrote can be guarded: a foreign row (no guard, as GoBridge writes) is invisible to it.
        written.push(...tx.filter((p) => p.foreign !== true));
        if (mix === undefined || random() >= mix.reuseRate || written.length === 0) continue;
        const earlier = written[Math.floor(random() * written.length)]!;
        attempts += 1;
        try {
            await writer.write({
                messages: [
                    {
                        id: earlier.message.id,
                        partition: `REUSE#${attempts}`,
                        type: "Reused",
                        payload: { reuses: earlier.index },
                    },
                ],
            });
            accepted += 1;
        } catch (err) {
            if (!isOutboxError(err, "INVALID_PAYLOAD")) throw err;
        }
    }
    return { attempts, accepted };
}

/**
 * Run one scenario and check its invariants.
 *
 * @param spec - The scenario.
 * @param options - Scale, rate and seed.
 */
export async function runScenario(spec: ScenarioSpec, options: RunOptions): Promise<ScenarioResult> {
    const seed = options.seed ?? 7;
    const faults = spec.faults(options.rate);
    const writeRandom = seededRandom(seed);
    const random = seededRandom(seed + 3);
    const ddb = await dynamoClient();
    const streams = new DynamoDBStreamsClient({
        endpoint: await dynamoEndpoint(),
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
    });
    const tableName = await createOutboxTable(ddb, `faults-${spec.name}`);
    const server: AwsFaultServer = await startAwsFaultServer({ seed });
    const destination: FaultDestination = faultDestination(server, spec.destination);
    const dlqUrl = server.createQueue("outbox-dlq");
    const sns = new SNSClient(localClientConfig(server.endpoint));
    const sqs = new SQSClient(localClientConfig(server.endpoint));
    // The relay's clock runs ahead of the writer's when the sweeper races the stream: every record is then already
    // older than sweepAfter (1 s), so both paths go for the same records.
    const relayClock = offsetClock(faults.sweeperDuringRun ? 2_000 : 0);
    // The recovery moves the relay's clock ahead of real time: DynamoDB's, as the sweeper reads it, moves with it.
    dateFollowsClock(ddb.middlewareStack, relayClock);
    const writerClock = offsetClock(0);
    const tag = spec.name.replace(/[^a-z0-9]/gi, "").slice(0, 12);
    const skewMix = faults.skewMix;
    const planned = planMessages(tag, options.messages, writerClock.now(), {
        poisonMix: faults.poisonMix !== undefined,
        skewMix: skewMix !== undefined,
        expiring: faults.redrive === true,
    });
    const expiringIds = new Set(planned.filter((p) => p.expiring === true).map((p) => p.message.id));
    const poisonIds = new Set(planned.filter((p) => p.poison).map((p) => p.message.id));
    const poisonRule: EntryFaultRule = {
        ...destination.poisonRefusal,
        actions: [destination.batchAction],
        when: (e) => poisonIds.has(destination.entryId(e)),
    };
    // Each rule decides by its own rate in `when`, from the scenario's RNG, so the faults it injects are counted
    // (poison refusals are not faults: they are the message's own property).
    let snsFaults = 0;
    const faultRandom = seededRandom(seed + 4);
    const counted = <R extends { readonly rate?: number; readonly when?: (...a: never[]) => boolean }>(rule: R): R => {
        const dice = faultDice(rule.rate ?? 1, faultRandom);
        return {
            ...rule,
            rate: undefined,
            when: (...a: never[]) => {
                const fire = (rule.when === undefined || rule.when(...a)) && dice();
                if (fire) snsFaults += 1;
                return fire;
            },
        };
    };
    server.setFaults({
        calls: (faults.calls ?? []).map(counted),
        entries: [poisonRule, ...(faults.entries ?? []).map(counted)],
    });

    let killCurrent: (() => void) | undefined;
    let kills = 0;
    // The redrive scenario's expiring records: each completion throttled while the faults last.
    const dynamoFaults = {
        ...faults.dynamo,
        ...(faults.redrive === true ? { completionsThrottled: (id: string) => expiringIds.has(id) } : {}),
    };
    const publisherDb: FaultyDynamoClient = faultyDynamoClient(ddb, dynamoFaults, seed + 1, () => {
        kills += 1;
        killCurrent?.();
    });
    let killSweep: (() => void) | undefined;
    const sweeperDb: FaultyDynamoClient = faultyDynamoClient(ddb, dynamoFaults, seed + 2, () => {
        kills += 1;
        killSweep?.();
    });
    const common = {
        sns,
        sqs,
        ...destination.config,
        tableName,
        dlqUrl,
        clock: relayClock,
        maxPublishAttempts: MAX_PUBLISH_ATTEMPTS,
        writeMetrics: options.writeMetrics ?? (() => undefined),
        ...(options.logger !== undefined ? { logger: options.logger } : {}),
    };
    const publisher = createPublisher({ ...common, dynamodb: publisherDb });
    const maxPartitionsPerRun = faults.maxPartitionsPerRun ?? HANDLER_LIMITS.maxPartitionsPerRun.fallback;
    const sweeper = createSweeper({
        ...common,
        dynamodb: sweeperDb,
        sweepAfterSeconds: SWEEP_AFTER_MS / 1000,
        maxPartitionsPerRun,
    });
    let redeliveries = 0;
    const killDice = faultDice(faults.kill ?? 0, random);
    const sweepKillDice = faultDice(faults.kill ?? 0, random);
    const redeliverDice = faultDice(faults.redeliver ?? 0, random);
    const streamLossDice = faultDice(faults.streamLoss ?? 0, random);
    let streamLosses = 0;
    // Decided once per stream record, so a record the stream "lost" stays lost on every redelivery.
    const lostRecords = new Set<string>();
    const keptRecords = new Set<string>();
    // With a skew mix, whole partitions lose their stream records (decided once per partition).
    const partitionLossRandom = seededRandom(seed + 5);
    const lostPartitions = new Map<string, boolean>();
    const partitionLost = (partition: string): boolean => {
        let lost = lostPartitions.get(partition);
        if (lost === undefined) {
            lost = fixedStreamLoss(partition) ?? partitionLossRandom() < (skewMix?.streamLossShare ?? 0);
            lostPartitions.set(partition, lost);
        }
        return lost;
    };
    const survives = (sequenceNumber: string, partition: string): boolean => {
        if (skewMix !== undefined && partitionLost(partition)) {
            if (!lostRecords.has(sequenceNumber)) streamLosses += 1;
            lostRecords.add(sequenceNumber);
            return false;
        }
        if (faults.streamLoss === undefined) return true;
        if (keptRecords.has(sequenceNumber)) return true;
        if (lostRecords.has(sequenceNumber)) return false;
        const lost = streamLossDice();
        (lost ? lostRecords : keptRecords).add(sequenceNumber);
        if (lost) streamLosses += 1;
        return !lost;
    };

    const handler = async (
        event: LambdaStreamEvent,
        context: LocalInvocationContext,
    ): Promise<LambdaStreamHandlerResult> => {
        let kill: (reason: Error) => void = () => undefined;
        const killed = new Promise<never>((_, reject) => {
            kill = reject;
        });
        // The invocation dies with its completion write in flight: what it published stays published, what it
        // had not completed stays pending or claimed.
        killCurrent = () => kill(new Error("invocation killed between publishing and completing (injected)"));
        publisherDb.armKill(
            killDice(perTenRecords(event)) ? 1 + Math.floor(random() * Math.min(10, event.Records.length)) : undefined,
        );
        try {
            const filtered = faults.streamLoss !== undefined || skewMix !== undefined;
            const delivered = filtered
                ? {
                      Records: event.Records.filter((r) =>
                          survives(r.dynamodb.SequenceNumber, partitionOf(r.dynamodb.Keys)),
                      ),
                  }
                : event;
            const out = await Promise.race([publisher(delivered, context), killed]);
            // Whole-batch redelivery: rewinding to the first record is always allowed, whatever the handler reported.
            if (event.Records.length > 0 && redeliverDice(perTenRecords(event))) {
                redeliveries += 1;
                return { batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }] };
            }
            return out;
        } finally {
            killCurrent = undefined;
            publisherDb.armKill(undefined);
        }
    };

    const mapping = await startLocalEventSourceMapping({
        streamsClient: streams,
        dynamodbClient: ddb,
        tableName,
        handler,
        batchSize: 100,
        pollIntervalMs: 5,
        retryBackoffMs: 5,
        maximumRetryAttempts: 10,
        ...(options.logger !== undefined ? { logger: options.logger } : {}),
    });

    let sweeping = faults.sweeperDuringRun === true;
    const sweepLoop = (async () => {
        while (sweeping) {
            const killed = new Promise<never>((_, reject) => {
                killSweep = () => reject(new Error("sweeper killed between publishing and completing (injected)"));
            });
            // A killed sweep dies at a random terminal write; its claims come back after the stale-claim window.
            sweeperDb.armKill(sweepKillDice() ? 1 + Math.floor(random() * 3) : undefined);
            try {
                await Promise.race([sweeper(), killed]);
            } catch {
                // A sweep that fails under injected faults is retried by the next one, as the schedule would.
            } finally {
                killSweep = undefined;
                sweeperDb.armKill(undefined);
            }
            await new Promise((resolve) => setTimeout(resolve, 20));
        }
    })();

    let recoverySweeps = 0;
    let leftOver: number;
    let reuse: Written;
    let stuck: StuckItem[] = [];
    let census: DueCensus | undefined;
    let tracker: DeliveryTracker | undefined;
    const topicIds = (): Set<string> => new Set(destination.acceptedIds());
    try {
        const address = destination.arn;
        const fifo = destination.fifo;
        const writer = new OutboxWriter({ client: ddb, tableName, clock: writerClock, address, fifo });
        const mix = faults.poisonMix;
        const writers: Writers = {
            writer,
            clock: writerClock,
            address,
            ...(mix !== undefined
                ? {
                      skewed: new OutboxWriter({
                          client: ddb,
                          tableName,
                          clock: offsetClock(mix.writerSkewMs),
                          address,
                          fifo,
                      }),
                      store: new OutboxStore({ client: ddb, tableName, clock: writerClock }),
                  }
                : {}),
            ...(skewMix !== undefined
                ? (() => {
                      const seqs = new Map<string, bigint>();
                      return {
                          fast: new OutboxWriter({
                              client: ddb,
                              tableName,
                              clock: offsetClock(skewMix.writerAheadMs),
                              address,
                              fifo,
                          }),
                          legacy: (run: readonly PlannedMessage[]) =>
                              putEmptyStatusRows(ddb, tableName, address, run, writerClock.now(), seqs),
                      };
                  })()
                : {}),
        };
        if (skewMix !== undefined)
            stuck = await plantStuckPartitions(
                ddb,
                tableName,
                address,
                skewMix.stuckPartitions,
                writerClock.now(),
                relayClock.now(),
            );
        reuse = await writeAll(writers, planned, writeRandom, mix);
        await mapping.drain({ timeoutMs: drainTimeoutMs(planned.length) });
        sweeping = false;
        await sweepLoop;
        await mapping.stop();

        // Recovery: the outage is over. Poison stays poison.
        server.setFaults({ entries: [poisonRule] });
        publisherDb.setEnabled(false);
        sweeperDb.setEnabled(false);
        // The stuck partitions never drain: they are checked on their own, as planted.
        const stuckPartitions = new Set(stuck.map((i) => i.partition));
        let stalled = 0;
        let stallBudget = RECOVERY_SWEEPS_WITHOUT_PROGRESS;
        for (let before = Number.POSITIVE_INFINITY; recoverySweeps < MAX_RECOVERY_SWEEPS; recoverySweeps += 1) {
            leftOver = nonTerminal(await scanRecordItems(ddb, tableName), stuckPartitions);
            if (leftOver === 0) break;
            stalled = leftOver < before ? 0 : stalled + 1;
            if (stalled >= stallBudget) break;
            before = Math.min(before, leftOver);
            relayClock.advance(RECOVERY_STEP_MS);
            if (recoverySweeps === 0 && faults.maxPartitionsPerRun !== undefined) {
                census = await dueCensus(ddb, tableName, relayClock.now(), SWEEP_AFTER_MS, RECOVERY_STEP_MS);
                // One round of the sweep cursor takes ⌈N / maxPartitionsPerRun⌉ runs, and a poisoned record gets
                // one attempt per round: the budget counts rounds.
                stallBudget =
                    RECOVERY_SWEEPS_WITHOUT_PROGRESS * Math.max(1, Math.ceil(census.partitions / maxPartitionsPerRun));
                if (skewMix !== undefined)
                    tracker = new DeliveryTracker(
                        planned.filter((p) => !stuckPartitions.has(p.message.partition)),
                        topicIds(),
                    );
            }
            await sweeper();
            tracker?.afterRun(recoverySweeps + 1, topicIds());
        }
        leftOver = nonTerminal(await scanRecordItems(ddb, tableName), stuckPartitions);
    } finally {
        sweeping = false;
        await sweepLoop;
        await mapping.stop();
        streams.destroy();
    }

    const topic = destination.acceptedIds().map((id) => ({ id }));
    const dlq = server.queueMessages(dlqUrl).map((m) => {
        const body = JSON.parse(m.body) as { recordId?: string; reason?: string };
        return { id: String(body.recordId), reason: String(body.reason) };
    });
    const report = { ...checkInvariants(planned, topic, dlq), messages: planned.length };
    const skew =
        skewMix === undefined
            ? undefined
            : skewReport(skewMix, {
                  planned,
                  writerNow: writerClock.now(),
                  stuck,
                  census,
                  tracker,
                  maxPartitionsPerRun,
                  items: await scanItems(ddb, tableName),
                  topic,
                  dlq,
                  lostPartitions,
              });
    // The operator's redrive, once the causes are fixed: every DLQ message back into the outbox, then delivered.
    const redrive =
        faults.redrive === true
            ? await redriveAndDeliver({
                  ddb,
                  sqs,
                  server,
                  dlqUrl,
                  tableName,
                  destination,
                  writerClock,
                  relayClock,
                  sweeper,
              })
            : undefined;
    const stats = mapping.stats();
    const dynamoInjected = [publisherDb, sweeperDb].reduce(
        (sum, c) => sum + c.counts.throttle + c.counts.conflict + c.counts.lostAnswer + c.counts.unprocessed,
        0,
    );
    let consumer: ConsumerReport;
    try {
        consumer = await consumeOnInbox(ddb, destination.consumerMessages(), {
            rate: options.rate,
            seed,
            tag,
            // Each event by the planned message its payload carries, whatever outbox id it reached the consumer under.
            eventOf: {
                delivered: (m) => messageId(tag, (m.payload as { index: number }).index),
                recorded: (m) =>
                    messageId(tag, (destination.consumerPayload(m) as { index?: number } | undefined)?.index ?? -1),
            },
            ...(options.logger !== undefined ? { logger: options.logger } : {}),
        });
    } finally {
        sns.destroy();
        sqs.destroy();
        destination.close();
        await server.stop();
    }
    return {
        ...report,
        name: spec.name,
        destination: destination.label,
        ordered: destination.ordered,
        leftOver,
        injected: snsFaults + dynamoInjected + kills + redeliveries + streamLosses,
        killed: kills,
        mappingRetries: stats.retries,
        mappingDiscarded: stats.recordsDiscarded,
        recoverySweeps,
        reuseAttempts: reuse.attempts,
        reuseAccepted: reuse.accepted,
        consumer,
        ...(skew !== undefined ? { skew } : {}),
        ...(redrive !== undefined ? { redrive } : {}),
    };
}

/**
 * The operator's redrive, as docs/operations.md describes it: the causes fixed (no faults; poison publishes now),
 * every DLQ message written back into the outbox by `redriveDeadLetters`, then the sweeper run (the relay clock
 * moved past `sweepAfter` each time) until no record is pending or claimed.
 */
async function redriveAndDeliver(world: {
    readonly ddb: DynamoDBClient;
    readonly sqs: SQSClient;
    readonly server: AwsFaultServer;
    readonly dlqUrl: string;
    readonly tableName: string;
    readonly destination: FaultDestination;
    readonly writerClock: Clock;
    readonly relayClock: OffsetClock;
    readonly sweeper: () => Promise<unknown>;
}): Promise<RedriveReport> {
    const { ddb, server, destination, tableName } = world;
    server.setFaults({});
    const deadLettered = server.queueMessages(world.dlqUrl).length;
    const result = await redriveDeadLetters({
        sqs: world.sqs,
        queueUrl: world.dlqUrl,
        writer: new OutboxWriter({
            client: ddb,
            tableName,
            clock: world.writerClock,
            address: destination.arn,
            fifo: destination.fifo,
        }),
        maxMessages: Math.max(1, deadLettered),
    });
    let sweeps = 0;
    let leftOver = nonTerminal(await scanRecordItems(ddb, tableName), new Set());
    for (; leftOver > 0 && sweeps < MAX_RECOVERY_SWEEPS; sweeps += 1) {
        world.relayClock.advance(RECOVERY_STEP_MS);
        await world.sweeper();
        leftOver = nonTerminal(await scanRecordItems(ddb, tableName), new Set());
    }
    const accepted = new Set(destination.acceptedIds());
    return {
        deadLettered,
        redriven: result.redriven,
        alreadyRedriven: result.alreadyRedriven,
        notRedrivable: result.notRedrivable,
        failed: result.failed,
        identityChanged: result.records
            .filter(([dead, , identity]) => identity !== dead)
            .map(([dead]) => dead)
            .slice(0, 20),
        undelivered: result.records
            .map(([, , identity]) => identity)
            .filter((identity) => !accepted.has(identity))
            .slice(0, 20),
        leftOver,
        sweeps,
    };
}

/** What is wrong with a redrive, one entry per problem. */
export function redriveProblems(k: RedriveReport, r: Pick<ScenarioResult, "publishedThenExpired">): string[] {
    return [
        r.publishedThenExpired.length === 0 ? "no event was published and then dead-lettered as expired" : "",
        k.redriven + k.alreadyRedriven !== k.deadLettered
            ? `redriven ${k.redriven} (+${k.alreadyRedriven} already) of ${k.deadLettered} dead letters`
            : "",
        k.notRedrivable > 0 ? `not-redrivable ${k.notRedrivable}` : "",
        k.failed > 0 ? `redrive-failed ${k.failed}` : "",
        k.identityChanged.length > 0 ? `identity-changed ${k.identityChanged.join(",")}` : "",
        k.undelivered.length > 0 ? `redriven-undelivered ${k.undelivered.join(",")}` : "",
        k.leftOver > 0 ? `left-over-after-redrive ${k.leftOver}` : "",
    ].filter((p) => p !== "");
}

/** The redrive's part of a scenario line. */
function redriveLine(k: RedriveReport, r: Pick<ScenarioResult, "publishedThenExpired">): string {
    return ` published-then-expired ${r.publishedThenExpired.length} redriven ${k.redriven}+${k.alreadyRedriven}-already/${k.deadLettered} redrive-sweeps ${k.sweeps}`;
}

/** The skew mix's accounting, from what was planned, planted and measured, and what the table, topic and DLQ hold. */
function skewReport(
    mix: SkewMix,
    seen: {
        readonly planned: readonly PlannedMessage[];
        /** The correct writer's clock after every write: a record stamped later was stamped ahead. */
        readonly writerNow: number;
        readonly stuck: readonly StuckItem[];
        readonly census: DueCensus | undefined;
        readonly tracker: DeliveryTracker | undefined;
        readonly maxPartitionsPerRun: number;
        readonly items: readonly Record<string, AttributeValue>[];
        readonly topic: readonly { id: string }[];
        readonly dlq: readonly { id: string }[];
        readonly lostPartitions: ReadonlyMap<string, boolean>;
    },
): SkewReport {
    const delivered = new Set([...seen.topic, ...seen.dlq].map((d) => d.id));
    const createdAt = new Map(
        seen.items.map((i) => [i[ATTR.recordId]?.S ?? "", Number(i[ATTR.createdAt]?.N ?? Number.NaN)]),
    );
    const carried = seen.planned.filter((p) => p.carried === true);
    const census = seen.census;
    return {
        aheadMs: mix.writerAheadMs,
        carriedWrites: carried.length,
        carriedNotAhead: carried
            .filter((p) => !((createdAt.get(p.message.id) ?? Number.NaN) > seen.writerNow))
            .map((p) => p.message.id),
        fastRecords: seen.planned.filter((p) => p.source === "fast").length,
        emptyStatusRows: seen.planned.filter((p) => p.source === "legacy").length,
        stuckPartitions: new Set(seen.stuck.map((i) => i.partition)).size,
        stuckRecords: seen.stuck.length,
        stuckChanged: stuckChanges(seen.stuck, seen.items),
        stuckDelivered: seen.stuck.map((i) => i.recordId).filter((id) => delivered.has(id)),
        streamLostPartitions: [...seen.lostPartitions.values()].filter((lost) => lost).length,
        maxPartitionsPerRun: seen.maxPartitionsPerRun,
        ...(census !== undefined ? { census } : {}),
        bound: census === undefined ? 0 : Math.ceil(census.partitions / seen.maxPartitionsPerRun) + census.dueDelayRuns,
        sweptPartitions: seen.tracker?.partitions ?? 0,
        runsToDeliver: seen.tracker?.runsToDeliver ?? 0,
        undelivered: seen.tracker?.undelivered ?? [],
    };
}

/** Whether the skew mix's accounting holds: correct writes behind a FENCE ahead accepted and stamped ahead, stuck items untouched, every swept partition delivered within the bound. */
export function skewHolds(k: SkewReport): boolean {
    return skewProblems(k).length === 0;
}

/** What is wrong with the skew mix's accounting, one entry per problem. */
export function skewProblems(k: SkewReport): string[] {
    return [
        k.carriedWrites === 0 ? "no correct keyed write went behind a FENCE set ahead" : "",
        k.carriedNotAhead.length > 0 ? `carried-not-stamped-ahead ${k.carriedNotAhead.join(",")}` : "",
        k.stuckChanged.length > 0 ? `stuck-changed ${k.stuckChanged.join(",")}` : "",
        k.stuckDelivered.length > 0 ? `stuck-delivered ${k.stuckDelivered.join(",")}` : "",
        k.stuckPartitions <= k.maxPartitionsPerRun
            ? `only ${k.stuckPartitions} stuck partitions for ${k.maxPartitionsPerRun} per run`
            : "",
        k.census === undefined || k.sweptPartitions === 0 ? "the sweeper had no partition to deliver" : "",
        k.census !== undefined && k.census.stampedAhead === 0 ? "no record stamped ahead was left to the sweeper" : "",
        k.undelivered.length > 0 ? `never-swept ${k.undelivered.join(",")}` : "",
        k.runsToDeliver > k.bound ? `runs-to-deliver ${k.runsToDeliver} over the bound ${k.bound}` : "",
    ].filter((p) => p !== "");
}

/** The skew mix's part of a scenario line. */
function skewLine(k: SkewReport): string {
    const c = k.census;
    return (
        ` carried-writes ${k.carriedWrites} (correct keyed writes behind a FENCE hours ahead: accepted, stamped ahead) fast-records ${k.fastRecords} empty-status-rows ${k.emptyStatusRows}` +
        ` stuck ${k.stuckPartitions}-partitions/${k.stuckRecords}-records-untouched stream-lost-partitions ${k.streamLostPartitions}` +
        (c !== undefined
            ? ` swept-partitions ${k.sweptPartitions} runs-to-deliver ${k.runsToDeliver} bound ${k.bound} (⌈${c.partitions} due / ${k.maxPartitionsPerRun} per run⌉ + ${c.dueDelayRuns}; ${c.stampedAhead} stamped ahead)`
            : " swept-partitions 0")
    );
}

/** Whether a result meets every invariant, the inbox consumer's exactly-once included. */
export function holds(r: ScenarioResult): boolean {
    return (
        (r.skew === undefined || skewHolds(r.skew)) &&
        (r.redrive === undefined || redriveProblems(r.redrive, r).length === 0) &&
        consumerHolds(r.consumer) &&
        r.lost === 0 &&
        r.inversions === 0 &&
        r.leftOver === 0 &&
        r.reuseAccepted === 0 &&
        r.dlqUnexpected.length === 0 &&
        r.dlqMissing.length === 0 &&
        r.publishedButDeadLettered.length === 0 &&
        r.wrongReason.length === 0
    );
}

/** One line per scenario. */
export function scenarioLine(r: ScenarioResult): string {
    const problems = [
        r.lostIds.length > 0 ? `lost-ids ${r.lostIds.join(",")}` : "",
        r.leftOver > 0 ? `left-over ${r.leftOver}` : "",
        r.dlqUnexpected.length > 0 ? `dlq-unexpected ${r.dlqUnexpected.join(",")}` : "",
        r.dlqMissing.length > 0 ? `dlq-missing ${r.dlqMissing.join(",")}` : "",
        r.publishedButDeadLettered.length > 0
            ? `published-and-dead-lettered ${r.publishedButDeadLettered.join(",")}`
            : "",
        r.wrongReason.length > 0 ? `wrong-reason ${r.wrongReason.join(",")}` : "",
        r.reuseAccepted > 0 ? `reused-ids-accepted ${r.reuseAccepted}` : "",
        ...(r.skew !== undefined ? skewProblems(r.skew) : []),
        ...(r.redrive !== undefined ? redriveProblems(r.redrive, r) : []),
    ].filter((p) => p !== "");
    return (
        `scenario ${r.name}: messages ${r.messages} lost ${r.lost} inversions ${r.inversions}${r.ordered ? "" : " (in put order: a bus keeps none)"} duplicates ${r.duplicates} ` +
        `injected ${r.injected} killed ${r.killed} mapping-retries ${r.mappingRetries} mapping-discarded ${r.mappingDiscarded} recovery-sweeps ${r.recoverySweeps}` +
        (r.destination !== "sns" ? ` destination ${r.destination}` : "") +
        (r.reuseAttempts > 0 ? ` reused-ids ${r.reuseAttempts - r.reuseAccepted}/${r.reuseAttempts}-refused` : "") +
        (r.skew !== undefined ? skewLine(r.skew) : "") +
        (r.redrive !== undefined ? redriveLine(r.redrive, r) : "") +
        (problems.length > 0 ? ` PROBLEMS ${problems.join("; ")}` : "") +
        `; ${consumerLine(r.consumer)}`
    );
}

/** The summary line: exactly `scenarios <s> messages <n> lost <l> inversions <i> duplicates <d>`. */
export function summaryLine(results: readonly ScenarioResult[]): string {
    const sum = (f: (r: ScenarioResult) => number) => results.reduce((s, r) => s + f(r), 0);
    return `scenarios ${results.length} messages ${sum((r) => r.messages)} lost ${sum((r) => r.lost)} inversions ${sum((r) => r.inversions)} duplicates ${sum((r) => r.duplicates)}`;
}

/**
 * The inbox consumer's summary over the scenarios: `inbox effects <n> applied-once <n> applied-twice <t>
 * never-applied <m> deliveries <d> redelivered <r> poison <p>/<q>-dead-lettered`.
 */
export function inboxSummaryLine(results: readonly ScenarioResult[]): string {
    const sum = (f: (c: ConsumerReport) => number) => results.reduce((s, r) => s + f(r.consumer), 0);
    return (
        `inbox effects ${sum((c) => c.expected)} applied-once ${sum((c) => c.appliedOnce)} applied-twice ${sum((c) => c.appliedTwice.length)} never-applied ${sum((c) => c.missing.length)} ` +
        `deliveries ${sum((c) => c.deliveries)} redelivered ${sum((c) => c.redelivered)} poison ${sum((c) => c.poisonDeadLettered)}/${sum((c) => c.poison)}-dead-lettered`
    );
}
