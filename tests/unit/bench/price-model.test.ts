import * as assert from "node:assert/strict";
import {
    billedWriteUnits,
    LAMBDA_X86_GB_SECOND_USD,
    pricePerMillion,
    type BilledUnits,
} from "../../../dev/bench/price-model";

const keyless: BilledUnits = {
    writeUnits: 12,
    readUnits: 1,
    lambdaRequests: 0.01,
    lambdaGbSeconds: 0.001,
    lambdaGbSecondUsd: LAMBDA_X86_GB_SECOND_USD,
    destination: "sns",
    destinationRequests: 0.1,
    pipeRequests: 0,
};

describe("bench price model", () => {
    it("prices units per message in dollars per million at the list prices", () => {
        const usd = pricePerMillion(keyless);
        // 12 × $0.625 + 1 × $0.125; 0.01 × $0.20 + 0.001 GB-s × 1e6 × $0.0000166667; 0.1 × $0.50.
        assert.ok(Math.abs(usd.dynamodb - 7.625) < 1e-9, `usd.dynamodb = ${usd.dynamodb}`);
        assert.ok(Math.abs(usd.lambda - (0.002 + 0.0166667)) < 1e-9, `usd.lambda = ${usd.lambda}`);
        assert.ok(Math.abs(usd.destination - 0.05) < 1e-9, `usd.destination = ${usd.destination}`);
        assert.equal(usd.pipe, 0);
        assert.ok(Math.abs(usd.total - 7.6936667) < 1e-9, `usd.total = ${usd.total}`);
    });

    it("bills EventBridge per event and Pipes per request", () => {
        const usd = pricePerMillion({
            ...keyless,
            destination: "eventbridge",
            destinationRequests: 1,
            pipeRequests: 1,
        });
        assert.ok(Math.abs(usd.destination - 1) < 1e-9, `usd.destination = ${usd.destination}`);
        assert.ok(Math.abs(usd.pipe - 0.4) < 1e-9, `usd.pipe = ${usd.pipe}`);
    });

    it("refuses a negative unit count with the count's name", () => {
        assert.throws(() => pricePerMillion({ ...keyless, writeUnits: -1 }), {
            message: "price model: writeUnits must be a finite number ≥ 0 per message, got -1",
        });
        assert.throws(() => pricePerMillion({ ...keyless, readUnits: Number.NaN }), /readUnits .* got NaN/);
    });

    it("raises transactional writes to 2 units per entry, never lowers them", () => {
        assert.equal(billedWriteUnits(3, { items: 2, tableUnits: 2 }), 5);
        assert.equal(billedWriteUnits(6, { items: 2, tableUnits: 4 }), 6);
    });
});
