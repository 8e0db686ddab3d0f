/**
 * The live half of `verify`: the store's preflight, then the runbook's end-to-end proof on the real table.
 * A verification record with a short expiry is persisted in a partition of its own (`__verify#<random>`), the
 * depth count sees it, the expiry sweep (the store's `expire`, which the sweeper runs) leaves it alone before
 * its expiry and moves it once it has expired, and the depth count drains. With `--dlq-url` the expired record
 * is also sent to the DLQ as the sweeper sends it, marked as a verification message. The record and the
 * partition's fence row are deleted afterwards, whatever happened.
 *
 * Every wait is bounded by `--timeout` and polls on the injected clock, because ExpiryIndex and ClaimIndex are
 * eventually consistent on AWS.
 *
 * @packageDocumentation
 */
import { randomUUID } from "node:crypto";
import { DeleteItemCommand, GetItemCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { OutboxError } from "../../runtime/errors";
import { deadLetterMessage, outboundMessage } from "../../runtime/record/message";
import type { NewOutboxRecord } from "../../runtime/record/codec";
import { recordKey, unmarshalRecord, type AttributeMap } from "../../runtime/record/codec";
import { fenceKey } from "../../runtime/record/fence";
import { ATTR, STATUS } from "../../runtime/schema";
import type { Checklist } from "../shared/checklist";
import { createSqsClient } from "../shared/client";
import type { CommandDeadline } from "../shared/deadline";
import { errorText, seconds, type Output } from "../shared/io";
import type { OutboxStore } from "../../runtime/store";

/** The prefix of the verification partition: no application partition starts with two underscores and `verify#`. */
export const VERIFY_PARTITION_PREFIX = "__verify#";

/** The envelope header that marks a verification record (and its DLQ message, whose body carries user headers). */
export const VERIFY_HEADER = "dynamodb-outbox-verify";

/** The store operations the live checks drive. */
export type VerifyStore = Pick<OutboxStore, "preflight" | "persist" | "expire" | "countPending">;

/** Options of the live checks. */
export interface ExpiryProbeOptions {
    /** The store on the table. */
    readonly store: VerifyStore;
    /** The DynamoDB client, for the read-back and the cleanup. */
    readonly client: DynamoDBClient;
    /** The table. */
    readonly tableName: string;
    /** The region, for the SQS client. */
    readonly region: string;
    /** Expiry of the verification record, ms after it is persisted. */
    readonly expiryMs: number;
    /** Bound on each wait, ms. */
    readonly timeoutMs: number;
    /** Poll interval, ms. */
    readonly pollIntervalMs: number;
    /** `--dlq-url`: also send the expired record there. */
    readonly dlqUrl?: string;
    /** `--sqs-endpoint`: the SQS endpoint for `dlqUrl`. @default undefined (the region's) */
    readonly sqsEndpoint?: string;
    /** SQS credentials, as the DynamoDB client got them. */
    readonly credentials?: {
        readonly accessKeyId: string;
        readonly secretAccessKey: string;
        readonly sessionToken?: string;
    };
    /** Where lines and progress go. */
    readonly out: Output;
    /** The command's deadline, for the SQS client of `dlqUrl`. @default unbounded */
    readonly deadline?: CommandDeadline;
    /**
     * The client that removes the verification record and its fence row: the command's client, but with a few more
     * seconds after `--timeout` ({@link CommandDeadline.cleanupSignal}), so a timed-out run still cleans up.
     * @default client
     */
    readonly cleanupClient?: DynamoDBClient;
}

/** What the live checks did, for `--json`. */
export interface ExpiryProbeReport {
    /** The verification partition. */
    readonly partition: string;
    /** The verification record id. */
    readonly recordId: string;
    /** Time from persist to the sweep that moved it, ms (clock time). */
    movedAfterMs?: number;
    /** The DLQ message id, with `--dlq-url`. */
    dlqMessageId?: string;
}

/**
 * Poll `probe` until it returns a value `accept` takes, or the bound runs out.
 *
 * @returns The accepted value, or the last value seen when the bound ran out (`accepted` false).
 */
async function pollUntil<T>(
    out: Output,
    options: ExpiryProbeOptions,
    what: string,
    probe: () => Promise<T>,
    accept: (v: T) => boolean,
    show: (v: T) => string,
    delay: () => number = () => options.pollIntervalMs,
): Promise<{ value: T; accepted: boolean; waitedMs: number }> {
    const started = out.clock.now();
    for (;;) {
        const value = await probe();
        const waitedMs = out.clock.now() - started;
        if (accept(value)) return { value, accepted: true, waitedMs };
        if (waitedMs >= options.timeoutMs) return { value, accepted: false, waitedMs };
        out.progress(`    … ${what}: ${show(value)} (${seconds(waitedMs)} of ${seconds(options.timeoutMs)})`);
        await out.clock.sleep(delay());
    }
}

async function cleanUp(
    options: ExpiryProbeOptions,
    partition: string,
    key: AttributeMap,
    checks: Checklist,
): Promise<void> {
    const client = options.cleanupClient ?? options.client;
    try {
        await client.send(new DeleteItemCommand({ TableName: options.tableName, Key: key }));
        await client.send(new DeleteItemCommand({ TableName: options.tableName, Key: fenceKey(partition) }));
        checks.add("cleanup", `verification record and fence row removed`, "pass", "");
    } catch (err) {
        checks.add(
            "cleanup",
            `verification record and fence row removed`,
            "fail",
            `${errorText(err)}; delete the items of partition "${partition}" by hand`,
        );
    }
}

async function sendToDlq(
    options: ExpiryProbeOptions,
    dlqUrl: string,
    partition: string,
    key: AttributeMap,
): Promise<string | undefined> {
    const item = (
        await options.client.send(new GetItemCommand({ TableName: options.tableName, Key: key, ConsistentRead: true }))
    ).Item;
    if (item === undefined)
        throw new OutboxError("NOT_FOUND", "the verification record vanished before it could be sent to the DLQ", {
            context: { partition },
        });
    const record = unmarshalRecord(item);
    const message = deadLetterMessage(outboundMessage(record), { reason: "expired", at: options.out.clock.now() });
    const sqs = createSqsClient(
        {
            region: options.region,
            endpoint: options.sqsEndpoint,
            queueUrl: dlqUrl,
            credentials: options.credentials,
            settings: "--dlq-url, --sqs-endpoint and --region",
        },
        options.deadline,
    );
    try {
        const fifo = dlqUrl.endsWith(".fifo");
        const sent = await sqs.send(
            new SendMessageCommand({
                QueueUrl: dlqUrl,
                MessageBody: message.body,
                MessageAttributes: message.attributes,
                // The same group and deduplication ids the publisher uses for a FIFO DLQ (runtime/relay/delivery.ts).
                ...(fifo ? { MessageGroupId: partition, MessageDeduplicationId: `${record.recordId}-expired` } : {}),
            }),
        );
        return sent.MessageId;
    } finally {
        sqs.destroy();
    }
}

/** The store's preflight, as the first line of `checks`. Returns whether it passed. */
async function preflightPasses(checks: Checklist, store: VerifyStore): Promise<boolean> {
    try {
        const outcome = await store.preflight();
        if (outcome !== "verified") {
            checks.add(
                "preflight",
                "store preflight passes",
                "fail",
                `preflight concluded "${outcome}", expected "verified"`,
            );
            return false;
        }
        checks.add("preflight", "store preflight passes", "pass", "");
        return true;
    } catch (err) {
        checks.add("preflight", "store preflight passes", "fail", errorText(err));
        return false;
    }
}

/** The verification record of one run, when it is persisted and expires, and the titles of its two checks. */
interface VerificationProbe {
    readonly partition: string;
    readonly record: NewOutboxRecord;
    readonly key: AttributeMap;
    readonly persistedAt: number;
    readonly expiresAt: number;
    /** The lease token the expiry sweeps run with. */
    readonly token: { readonly owner: string; readonly version: bigint };
    readonly expiryTitle: string;
    readonly depthTitle: string;
}

/** The verification record, persisted now, expiring `--expiry` later, in a partition of its own. */
function verificationProbe(
    options: ExpiryProbeOptions,
    suffix: string,
    partition: string,
    recordId: string,
): VerificationProbe {
    const persistedAt = options.out.clock.now();
    const expiresAt = persistedAt + options.expiryMs;
    const record: NewOutboxRecord = {
        partition,
        recordId,
        bindingId: "verify",
        address: "dynamodb-outbox verify",
        envelope: {
            id: recordId,
            subject: "dynamodb-outbox.verify",
            payload: "{}",
            headers: { [VERIFY_HEADER]: "true" },
            createdAt: persistedAt,
            expiresAt,
        },
    };
    return {
        partition,
        record,
        key: recordKey(partition, recordId, record.bindingId),
        persistedAt,
        expiresAt,
        token: { owner: `dynamodb-outbox-verify-${suffix}`, version: 1n },
        expiryTitle: `a record expiring ${seconds(options.expiryMs)} after persist, in partition "${partition}", is moved by the expiry sweep`,
        depthTitle: `depth (countPending) counts it, then drains`,
    };
}

/** The sweep leaves the record alone before its expiry, then moves it. Adds the failure line and returns false if not. */
async function expirySweepMoves(
    checks: Checklist,
    options: ExpiryProbeOptions,
    p: VerificationProbe,
): Promise<boolean> {
    const { store, out } = options;
    const early = out.clock.now() < p.expiresAt ? await store.expire(out.clock.now(), p.partition, p.token) : 0;
    if (early !== 0) {
        checks.add(
            "expiry",
            p.expiryTitle,
            "fail",
            `the sweep moved ${early} record(s) before the expiry: check the clock of this machine`,
        );
        return false;
    }
    const moved = await pollUntil(
        out,
        options,
        "waiting for the expiry sweep",
        async () => (out.clock.now() <= p.expiresAt ? -1 : store.expire(out.clock.now(), p.partition, p.token)),
        (n) => n >= 1,
        (n) =>
            n < 0 ? `expires in ${seconds(p.expiresAt - out.clock.now())}` : `sweep moved ${n} (ExpiryIndex may lag)`,
        // The sweep takes records with expires_at < cutoff: poll right after the expiry rather than a poll later.
        () => {
            const untilExpired = p.expiresAt + 1 - out.clock.now();
            return untilExpired > 0 ? Math.min(options.pollIntervalMs, untilExpired) : options.pollIntervalMs;
        },
    );
    if (!moved.accepted) {
        checks.add(
            "expiry",
            p.expiryTitle,
            "fail",
            `not moved ${seconds(out.clock.now() - p.persistedAt)} after persist: the sweep reads ExpiryIndex (has_expiry, expires_at); check that index, or raise --timeout`,
        );
        return false;
    }
    return true;
}

/** Read the moved record back: expired, with a ttl, out of both indexes. Adds the expiry line; returns whether it passed. */
async function movedRecordChecks(
    checks: Checklist,
    options: ExpiryProbeOptions,
    p: VerificationProbe,
    movedAfterMs: number,
): Promise<boolean> {
    const item = (
        await options.client.send(
            new GetItemCommand({ TableName: options.tableName, Key: p.key, ConsistentRead: true }),
        )
    ).Item;
    const status = item?.[ATTR.status]?.S;
    const ttl = item?.[ATTR.ttl]?.N;
    const sparse = item?.[ATTR.claimSort] === undefined && item?.[ATTR.hasExpiry] === undefined;
    if (status !== STATUS.expired || ttl === undefined || !sparse) {
        checks.add(
            "expiry",
            p.expiryTitle,
            "fail",
            `after the sweep the record has status ${status ?? "<none>"}, ttl ${ttl ?? "<none>"}, index attributes ${sparse ? "removed" : "still set"}; expected expired, a ttl, and no claim_sort/has_expiry`,
        );
        return false;
    }
    checks.add(
        "expiry",
        p.expiryTitle,
        "pass",
        `moved ${seconds(movedAfterMs)} after persist; status ${STATUS.expired}, ttl ${ttl}, out of ClaimIndex and ExpiryIndex`,
    );
    return true;
}

/** With `--dlq-url`: send the expired record there, and add the dlq line. */
async function dlqCheck(
    checks: Checklist,
    options: ExpiryProbeOptions,
    dlqUrl: string,
    p: VerificationProbe,
    report: ExpiryProbeReport,
): Promise<void> {
    try {
        report.dlqMessageId = await sendToDlq(options, dlqUrl, p.partition, p.key);
        checks.add(
            "dlq",
            `expired record sent to the DLQ`,
            "pass",
            `message ${report.dlqMessageId} on ${dlqUrl} (body headers carry ${VERIFY_HEADER}: true; consumers may discard it)`,
        );
    } catch (err) {
        checks.add(
            "dlq",
            `expired record sent to the DLQ`,
            "fail",
            `${errorText(err)} (check the queue URL and region; the tool needs sqs:SendMessage on the queue)`,
        );
    }
}

/** The persisted record's round trip: counted, moved by the sweep, read back, sent to the DLQ, and counted no more. */
async function roundTrip(
    checks: Checklist,
    options: ExpiryProbeOptions,
    p: VerificationProbe,
    report: ExpiryProbeReport,
): Promise<void> {
    const { store, out } = options;
    const countPending = (): Promise<number> => store.countPending(p.partition);
    const seen = await pollUntil(
        out,
        options,
        "waiting for depth to count the record",
        countPending,
        (n) => n === 1,
        (n) => `countPending = ${n}`,
    );
    if (!seen.accepted) {
        checks.add(
            "depth",
            p.depthTitle,
            "fail",
            `countPending stayed ${seen.value} for ${seconds(seen.waitedMs)} after persist (expected 1): ClaimIndex does not see new records`,
        );
    }
    if (!(await expirySweepMoves(checks, options, p))) return;
    report.movedAfterMs = out.clock.now() - p.persistedAt;
    if (!(await movedRecordChecks(checks, options, p, report.movedAfterMs))) return;
    if (options.dlqUrl !== undefined) await dlqCheck(checks, options, options.dlqUrl, p, report);
    if (seen.accepted) {
        const drained = await pollUntil(
            out,
            options,
            "waiting for depth to drain",
            countPending,
            (n) => n === 0,
            (n) => `countPending = ${n}`,
        );
        checks.add(
            "depth",
            p.depthTitle,
            drained.accepted ? "pass" : "fail",
            drained.accepted
                ? `1 after persist, 0 after the sweep`
                : `countPending still ${drained.value} ${seconds(drained.waitedMs)} after the sweep: expire must remove claim_sort`,
        );
    }
}

/**
 * Run the preflight and the expiry round trip, adding their lines to `checks`.
 *
 * @returns What was done, for `--json`.
 */
export async function checkLive(checks: Checklist, options: ExpiryProbeOptions): Promise<ExpiryProbeReport> {
    const suffix = randomUUID();
    const partition = `${VERIFY_PARTITION_PREFIX}${suffix}`;
    const recordId = `verify-${suffix}`;
    const report: ExpiryProbeReport = { partition, recordId };
    if (!(await preflightPasses(checks, options.store))) return report;
    const p = verificationProbe(options, suffix, partition, recordId);
    try {
        await options.store.persist([p.record]);
    } catch (err) {
        checks.add("expiry", p.expiryTitle, "fail", `persist failed: ${errorText(err)}`);
        checks.add("depth", p.depthTitle, "skip", "needs the persisted record");
        return report;
    }
    try {
        await roundTrip(checks, options, p, report);
        return report;
    } catch (err) {
        if (checks.results.some((r) => r.id === "expiry")) checks.add("depth", p.depthTitle, "fail", errorText(err));
        else checks.add("expiry", p.expiryTitle, "fail", errorText(err));
        return report;
    } finally {
        if (!checks.results.some((r) => r.id === "depth"))
            checks.add("depth", p.depthTitle, "skip", "needs the expiry sweep to move the record");
        await cleanUp(options, partition, p.key, checks);
    }
}
