import * as assert from "node:assert/strict";
import * as path from "node:path";
import { OUTBOX_TYPE, Outbox } from "../../components/outbox";

describe("Outbox as a multi-language component", () => {
    it("has the type token component hosting validates: <package name>:index:<class name>", () => {
        const pkg = require(path.join(__dirname, "..", "..", "package.json"));
        assert.equal(OUTBOX_TYPE, `${pkg.name}:index:${Outbox.name}`);
    });

    it("passes Pulumi's component schema analyzer: args and outputs other languages can use", function () {
        this.timeout(120000);
        // Experimental API of @pulumi/pulumi (what `pulumi package add` runs to generate other languages' SDKs).
        // eslint-disable-next-line @typescript-eslint/no-var-requires
        const { Analyzer } = require("@pulumi/pulumi/provider/experimental/analyzer");
        const root = path.join(__dirname, "..", "..");
        const pkg = require(path.join(root, "package.json"));
        const { components } = new Analyzer(root, "dynamodb-outbox", pkg, new Set(["Outbox"])).analyze();
        const outbox = components.Outbox;
        assert.ok(outbox, "the analyzer found the Outbox component");
        assert.deepEqual(Object.keys(outbox.outputs).sort(), [
            "alarmArns",
            "dlqArn",
            "dlqUrl",
            "publisherFunctionName",
            "streamArn",
            "sweeperFunctionName",
            "tableArn",
            "tableName",
            "topicArn",
            "writerPolicy",
        ]);
        assert.ok(Object.keys(outbox.inputs).includes("transform"));
        assert.equal(outbox.inputs.maximumRetryAttempts.type, "number");
        assert.equal(outbox.inputs.alarms.type, "boolean");
        assert.ok(outbox.inputs.alarmThresholds, "alarmThresholds is an input");
        assert.ok(outbox.inputs.alarmActions, "alarmActions is an input");
    });
});
