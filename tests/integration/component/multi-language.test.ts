import * as assert from "node:assert/strict";
import { OUTBOX_TYPE, Outbox } from "../../../components/outbox";
import { TRANSFORM_KEYS } from "../../../components/transform";
import { analyzeComponents, assertExpressionInputs, enumValues, typeToken } from "../../support/component-schema";

describe("Outbox as a multi-language component", () => {
    it("has the type token component hosting validates: <package name>:index:<class name>", () => {
        assert.equal(OUTBOX_TYPE, typeToken(Outbox.name));
    });

    it("passes Pulumi's component schema analyzer: args and outputs other languages can use", function () {
        this.timeout(120000);
        const schema = analyzeComponents("Outbox");
        const { typeDefinitions } = schema;
        const outbox = schema.components.Outbox;
        assert.ok(outbox, "the analyzer found the Outbox component");
        assert.deepEqual(Object.keys(outbox.outputs).sort(), [
            "alarmArns",
            "destinationArn",
            "dlqArn",
            "dlqUrl",
            "payloadBucketName",
            "publisherFunctionName",
            "readerPolicy",
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
        assert.equal(outbox.inputs.largePayloads.type, "boolean");
        assert.equal(outbox.inputs.payloadBucketArn.type, "string");
        assert.equal(outbox.inputs.payloadExpirationDays.type, "number");
        assert.equal(outbox.outputs.readerPolicy.type, "string");
        assert.equal(outbox.outputs.payloadBucketName.type, "string");
        // The destinations: each ARN an Input other languages pass as a string; topicArn, undefined but for SNS,
        // stays a string output as payloadBucketName does.
        assertExpressionInputs(
            outbox,
            ["topicArn", "queueArn", "eventBusArn", "eventSource", "destinationKmsKeyArn"],
            "string",
        );
        assert.equal(outbox.outputs.destinationArn.type, "string");
        assert.equal(outbox.outputs.topicArn.type, "string");
        assert.ok(outbox.inputs.alarmThresholds, "alarmThresholds is an input");
        assert.ok(outbox.inputs.alarmActions, "alarmActions is an input");
        // The choices are enums other languages can name; a plain arg is `plain`, an Input arg takes an expression.
        assert.equal(outbox.inputs.billingMode.$ref, "#/types/dynamodb-outbox:index:OutboxBillingMode");
        assert.deepEqual(enumValues(schema, "OutboxBillingMode"), ["PAY_PER_REQUEST", "PROVISIONED"]);
        assert.equal(outbox.inputs.logLevel.$ref, "#/types/dynamodb-outbox:index:OutboxLogLevel");
        assert.deepEqual(enumValues(schema, "OutboxLogLevel"), ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"]);
        const plain = Object.keys(outbox.inputs)
            .filter((k) => outbox.inputs[k].plain === true)
            .sort();
        assert.deepEqual(
            plain,
            [
                "alarmThresholds",
                "alarms",
                "billingMode",
                "cloudEvents",
                "dashboard",
                "fifo",
                "globalSecondaryIndexes",
                "importTableName",
                "largePayloads",
                "replicaRegions",
                "transform",
                "vpc",
            ].filter((k) => k in outbox.inputs),
        );
        // The replicas' regions (issue 37): a plain list of strings, each region's children are declared from it.
        assert.deepEqual(
            [outbox.inputs.replicaRegions.type, outbox.inputs.replicaRegions.items.type],
            ["array", "string"],
        );
        // The args of issue 39 that YAML and Python use: the VPC, the extra indexes, and an object for every
        // transform key (a callback is TypeScript's and JavaScript's only: the schema has no function type).
        assert.equal(outbox.inputs.vpc.$ref, "#/types/dynamodb-outbox:index:OutboxVpc");
        for (const list of ["subnetIds", "securityGroupIds"]) {
            const property = typeDefinitions.OutboxVpc.properties[list];
            assert.deepEqual(
                [property.type, property.items.type, property.plain],
                ["array", "string", undefined],
                list,
            );
        }
        assert.deepEqual(
            [outbox.inputs.globalSecondaryIndexes.type, outbox.inputs.globalSecondaryIndexes.items.$ref],
            ["array", "#/types/dynamodb-outbox:index:OutboxTableIndex"],
        );
        assert.deepEqual(Object.keys(typeDefinitions.OutboxTableIndex.properties).sort(), [
            "hashKey",
            "hashKeyType",
            "name",
            "nonKeyAttributes",
            "projectionType",
            "rangeKey",
            "rangeKeyType",
        ]);
        assert.deepEqual(enumValues(schema, "OutboxAttributeType"), ["S", "N", "B"]);
        assert.deepEqual(enumValues(schema, "OutboxProjectionType"), ["ALL", "KEYS_ONLY", "INCLUDE"]);
        assert.equal(outbox.inputs.transform.$ref, "#/types/dynamodb-outbox:index:OutboxTransforms");
        const transformKeys = typeDefinitions.OutboxTransforms.properties;
        assert.deepEqual(Object.keys(transformKeys).sort(), [...TRANSFORM_KEYS].sort());
        for (const key of TRANSFORM_KEYS)
            assert.match(transformKeys[key].$ref, /^#\/types\/dynamodb-outbox:index:Partial\w+Args$/, key);
        // The unions other languages cannot say are strings there: a role's trust policy, an alarm's actions.
        assert.equal(typeDefinitions.PartialOutboxRoleArgs.properties.assumeRolePolicy.type, "string");
        assert.equal(typeDefinitions.PartialOutboxMetricAlarmArgs.properties.alarmActions.items.type, "string");
        assert.deepEqual([outbox.inputs.alarmActions.type, outbox.inputs.alarmActions.items.type], ["array", "string"]);
        // The analyzer writes a TSDoc {@link} as "[object Object]": the descriptions must do without.
        const descriptions = [
            outbox.description,
            ...Object.values(outbox.inputs),
            ...Object.values(outbox.outputs),
            ...Object.values(typeDefinitions)
                .filter((t: any) => /^Outbox/.test(t.name))
                .flatMap((t: any) => [t, ...Object.values(t.properties ?? {}), ...(t.enum ?? [])]),
        ]
            .map((d: any) => (typeof d === "string" ? d : d?.description))
            .filter((d): d is string => typeof d === "string");
        assert.ok(descriptions.length > 40, `${descriptions.length} descriptions`);
        assert.deepEqual(
            descriptions.filter((d) => d.includes("[object Object]")),
            [],
        );
    });
});
