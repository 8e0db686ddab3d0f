/**
 * The property of issue 38, by generation: whatever the writer accepts, the relay finishes. fast-check draws cases
 * ({@link edgeCase}), each runs on real parts ({@link runCase}), and a failure is shrunk to the smallest case that
 * still fails and reported with its seed and path, which replay it. Shared by the fixed-seed run in `npm test`
 * (tests/integration/relay/edges.test.ts) and `npm run test:edges` (dev/edges.ts).
 *
 * @packageDocumentation
 */
import fc from "fast-check";
import { startFauxqs } from "../../../dev/emulators/fauxqs";
import { createPayloadBucket, localPayloadObjects } from "../../../dev/emulators/local-s3";
import { edgeCase } from "./cases";
import { runCase, type CaseReport } from "./run-case";

/** A run's settings. */
export interface EdgesRun {
    /** Cases to draw. */
    readonly runs: number;
    /** fast-check's seed. */
    readonly seed: number;
    /** A failure's path, to replay it (with its seed) without drawing the cases before it. @default undefined */
    readonly path?: string;
    /** Where progress lines go, every `progressEvery` cases. @default nowhere */
    readonly log?: (line: string) => void;
    /** @default 100 */
    readonly progressEvery?: number;
}

/** What a run did. */
export interface EdgesTally {
    /** Cases run, shrinking's included. */
    cases: number;
    messages: number;
    accepted: number;
    refused: number;
    published: number;
    offloaded: number;
    deadLettered: Record<string, number>;
    /** Refusals by kind (their variable parts blanked), most frequent first when printed. */
    refusals: Map<string, number>;
    byDestination: Record<string, number>;
    /** Accepted messages grown exactly to the writer's edge (or the claim check's), by place. */
    atEdge: Record<string, number>;
    largestRecordBytes: number;
    /** Cases whose messages on the destination came to over 1,000,000 bytes together: past one SQS or EventBridge call. */
    overOneMegabyte: number;
    mostInvocations: number;
    mostSweeps: number;
}

/** The outcome of a run: the tally, and fast-check's report of a failure. */
export interface EdgesResult {
    readonly tally: EdgesTally;
    /** fast-check's report: the seed, the path, the shrunk counterexample and the error. `undefined` when it held. */
    readonly failure?: string;
}

function emptyTally(): EdgesTally {
    return {
        cases: 0,
        messages: 0,
        accepted: 0,
        refused: 0,
        published: 0,
        offloaded: 0,
        deadLettered: {},
        refusals: new Map(),
        byDestination: {},
        atEdge: {},
        largestRecordBytes: 0,
        overOneMegabyte: 0,
        mostInvocations: 0,
        mostSweeps: 0,
    };
}

function add(tally: EdgesTally, r: CaseReport): void {
    tally.cases += 1;
    tally.messages += r.messages;
    tally.accepted += r.accepted;
    tally.refused += r.refusals.length;
    tally.published += r.published;
    tally.offloaded += r.offloaded;
    for (const [reason, n] of Object.entries(r.deadLettered))
        tally.deadLettered[reason] = (tally.deadLettered[reason] ?? 0) + n;
    for (const kind of r.refusals) tally.refusals.set(kind, (tally.refusals.get(kind) ?? 0) + 1);
    tally.byDestination[r.destination] = (tally.byDestination[r.destination] ?? 0) + 1;
    for (const place of r.atEdge) tally.atEdge[place] = (tally.atEdge[place] ?? 0) + 1;
    tally.largestRecordBytes = Math.max(tally.largestRecordBytes, r.largestRecordBytes);
    if (r.publishedBytes > 1_000_000) tally.overOneMegabyte += 1;
    tally.mostInvocations = Math.max(tally.mostInvocations, r.invocations);
    tally.mostSweeps = Math.max(tally.mostSweeps, r.sweeps);
}

/** The tally in a few lines. */
export function tallyLines(tally: EdgesTally, topRefusals = 12): string[] {
    const refusals = [...tally.refusals.entries()].sort((a, b) => b[1] - a[1]).slice(0, topRefusals);
    return [
        `cases ${tally.cases} messages ${tally.messages} accepted ${tally.accepted} refused-writes ${tally.refused} published ${tally.published} offloaded ${tally.offloaded} dead-lettered ${JSON.stringify(tally.deadLettered)}`,
        `accepted at an edge ${JSON.stringify(tally.atEdge)}`,
        `destinations ${JSON.stringify(tally.byDestination)} largest-record ${tally.largestRecordBytes} bytes, cases over 1 MB published ${tally.overOneMegabyte}, most invocations ${tally.mostInvocations}, most sweeps ${tally.mostSweeps}`,
        "refusals by kind:",
        ...refusals.map(([kind, n]) => `  ${String(n).padStart(5)} ${kind}`),
    ];
}

/** The bucket the claim check's payloads go to, on fauxqs's S3. */
const BUCKET = "edges-payloads";

/** Run the property; never throws for a failing case (see {@link EdgesResult.failure}). */
export async function checkEdges(run: EdgesRun): Promise<EdgesResult> {
    const fauxqs = await startFauxqs();
    const objects = localPayloadObjects(fauxqs.endpoint);
    const tally = emptyTally();
    const every = run.progressEvery ?? 100;
    try {
        await createPayloadBucket(objects, BUCKET);
        const property = fc.asyncProperty(edgeCase(), async (c) => {
            add(tally, await runCase(c, { objects, bucket: BUCKET }));
            if (tally.cases % every === 0) run.log?.(`  ${tally.cases} cases, ${tally.accepted} messages accepted`);
        });
        const details = await fc.check(property, {
            seed: run.seed,
            numRuns: run.runs,
            ...(run.path !== undefined ? { path: run.path } : {}),
        });
        if (!details.failed) return { tally };
        const error = details.errorInstance;
        return {
            tally,
            failure: [
                fc.defaultReportMessage(details) ?? "failed",
                `Got error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
                `Replay: npm run test:edges -- --seed ${details.seed} --path "${details.counterexamplePath ?? ""}"`,
            ].join("\n"),
        };
    } finally {
        objects.destroy();
        await fauxqs.stop();
    }
}
