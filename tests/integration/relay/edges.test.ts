/**
 * Issue 38's rule, proven by generation: whatever the writer accepts, the relay finishes. A fixed seed draws a few
 * dozen cases at the edges (sizes a few bytes around each limit the writer checks, header counts, every character
 * class a field may hold, keyed and keyless, every destination kind with `fifo` set and not, with and without a claim
 * check), and each runs on DynamoDB Local's real stream, the real publisher and sweeper, the fault server and fauxqs's
 * S3 (tests/support/edges/). A refused write must leave nothing; an accepted record must end completed or
 * dead-lettered within a bound of invocations and sweeps, and be on the destination or in the DLQ.
 * `npm run test:edges -- --runs N --seed S` runs more; docs/reliability.md says how.
 */
import assert from "node:assert/strict";
import { checkEdges, tallyLines } from "../../support/edges/property";

/** The CI run's seed and size: about a minute on two cores. */
const SEED = 38;
const RUNS = 30;

describe("whatever the writer accepts, the relay finishes (generated cases, DynamoDB Local + the fault server)", function () {
    this.timeout(15 * 60_000);

    it(`${RUNS} cases of seed ${SEED}: each accepted record completed or dead-lettered within the bound, none completed unpublished, each refusal clean`, async function () {
        const { tally, failure } = await checkEdges({ runs: RUNS, seed: SEED });
        assert.equal(failure, undefined, failure);
        assert.equal(tally.cases, RUNS);
        // The cases reach both sides of the edges: some accepted, some refused, some dead-lettered.
        assert.ok(tally.accepted > 0, tallyLines(tally).join("\n"));
        assert.ok(tally.refused > 0, tallyLines(tally).join("\n"));
    });
});
