/**
 * The origin stamp's pieces without I/O: the filters `streamFilterPatterns` gives per region, the rule
 * `originTaken` they filter by, the store's condition piece `originIs`, and the checks of the writer's region and
 * of an origin scope. The property: over any set of regions and any stamp, exactly one region takes a record, and
 * its mapping filter passes it (no record is left to no one, none to two).
 */
import * as assert from "node:assert/strict";
import fc from "fast-check";
import { ENV, readHandlerEnvironment } from "../../../runtime/config";
import { checkOriginScope, checkRegionName } from "../../../runtime/record/origin";
import {
    ATTR,
    originTaken,
    RECORD_SK_PREFIX,
    STREAM_FILTER_PATTERN,
    streamFilterPatternJson,
    streamFilterPatterns,
    type OriginScope,
} from "../../../runtime/schema";
import { originIs } from "../../../runtime/store/expressions";
import { matchesFilterPattern, type FilterPattern } from "../../../runtime/testing/filter-pattern";
import { writerOriginRegion } from "../../../runtime/writer/origin-region";

/** The scopes of a table whose regions are `regions`, the first being home. */
function scopesOf(regions: readonly string[]): OriginScope[] {
    return regions.map((region, i) => ({
        region,
        otherRegions: regions.filter((r) => r !== region),
        home: i === 0,
    }));
}

/** A stream INSERT of an outbox record with stamp `origin` (none when `undefined`), in Lambda's shape. */
function insertWith(origin: string | undefined): unknown {
    const image = {
        [ATTR.pk]: { S: "P" },
        [ATTR.sk]: { S: `${RECORD_SK_PREFIX}id#sns` },
        ...(origin !== undefined ? { [ATTR.originRegion]: { S: origin } } : {}),
    };
    return {
        eventName: "INSERT",
        dynamodb: { Keys: { [ATTR.pk]: image[ATTR.pk], [ATTR.sk]: image[ATTR.sk] }, NewImage: image },
    };
}

function passes(scope: OriginScope | undefined, record: unknown): boolean {
    return (streamFilterPatterns(scope) as FilterPattern[]).some((p) => matchesFilterPattern(p, record as never));
}

const region = fc
    .tuple(
        fc.constantFrom("us", "eu", "ap", "ca"),
        fc.constantFrom("east", "west", "south", "central"),
        fc.integer({ min: 1, max: 9 }),
    )
    .map(([a, b, n]) => `${a}-${b}-${n}`);

describe("origin stamps", () => {
    it("a single-region outbox's filter is byte for byte today's", () => {
        assert.deepEqual(streamFilterPatterns(undefined), [STREAM_FILTER_PATTERN]);
        assert.equal(JSON.stringify(streamFilterPatterns(undefined)[0]), streamFilterPatternJson());
        assert.equal(originIs(undefined), undefined, "and no condition piece is added to the store's requests");
        assert.equal(originIs({ region: "us-east-1", otherRegions: [], home: true }), undefined);
    });

    it("property: over any regions and any stamp, exactly one region takes a record, and only its filter passes it", () => {
        fc.assert(
            fc.property(
                fc.uniqueArray(region, { minLength: 1, maxLength: 4 }),
                fc.option(region, { nil: undefined }),
                (regions, stamp) => {
                    const scopes = scopesOf(regions);
                    const takers = scopes.filter((s) => originTaken(s, stamp));
                    assert.equal(takers.length, 1, `${String(stamp)} over ${regions.join(",")}`);
                    const expected = stamp !== undefined && regions.includes(stamp) ? stamp : regions[0];
                    assert.equal(takers[0]!.region, expected);
                    for (const s of scopes)
                        assert.equal(passes(s, insertWith(stamp)), originTaken(s, stamp), `filter of ${s.region}`);
                    assert.ok(passes(undefined, insertWith(stamp)), "today's filter passes every record");
                },
            ),
            { numRuns: 300, seed: 37 },
        );
    });

    it("the home region's filters: every stamp but the other regions', and unstamped records", () => {
        const [home, away] = scopesOf(["us-east-1", "us-west-2"]);
        assert.deepEqual(streamFilterPatterns(away), [
            {
                eventName: ["INSERT"],
                dynamodb: {
                    Keys: { SK: { S: [{ prefix: "OUTBOX#" }] } },
                    NewImage: { origin_region: { S: ["us-west-2"] } },
                },
            },
        ]);
        assert.deepEqual(
            streamFilterPatterns(home).map((p) => (p as { dynamodb: { NewImage: unknown } }).dynamodb.NewImage),
            [
                { origin_region: { S: [{ "anything-but": ["us-west-2"] }] } },
                { origin_region: { S: [{ exists: false }] } },
            ],
        );
        assert.deepEqual(originIs(away), {
            text: "#origin_region = :origin_region",
            names: { "#origin_region": "origin_region" },
            values: { ":origin_region": { S: "us-west-2" } },
        });
        assert.equal(
            originIs(home)?.text,
            "attribute_not_exists(#origin_region) OR NOT (#origin_region IN (:origin_other_0))",
        );
    });

    it("the writer stamps its region, else AWS_REGION, else nothing; globalTable requires one", () => {
        assert.equal(writerOriginRegion("eu-west-1", undefined, { AWS_REGION: "us-east-1" }), "eu-west-1");
        assert.equal(writerOriginRegion(undefined, undefined, { AWS_REGION: "us-east-1" }), "us-east-1");
        assert.equal(writerOriginRegion(undefined, undefined, {}), undefined);
        assert.equal(writerOriginRegion(undefined, true, { AWS_REGION: "us-gov-west-1" }), "us-gov-west-1");
        assert.throws(
            () => writerOriginRegion(undefined, true, {}),
            (e: Error & { code?: string }) =>
                e.code === "INVALID_CONFIG" &&
                /globalTable is true but no region is known/.test(e.message) &&
                /AWS_REGION/.test(e.message),
        );
        assert.throws(
            () => writerOriginRegion("US East", undefined, {}),
            /OutboxWriter: region must be an AWS region name like "us-east-1", got "US East"/,
        );
        assert.throws(
            () => writerOriginRegion(undefined, undefined, { AWS_REGION: "ddblocal" }),
            /region \(from AWS_REGION\) must be an AWS region name/,
        );
        assert.throws(
            () => writerOriginRegion(undefined, "yes" as never, {}),
            /globalTable must be true or false, got "yes"/,
        );
    });

    it("refuses a malformed origin scope, naming the part", () => {
        assert.deepEqual(
            checkOriginScope("createPublisher", { region: "us-east-1", otherRegions: ["us-west-2"], home: true }),
            {
                region: "us-east-1",
                otherRegions: ["us-west-2"],
                home: true,
            },
        );
        assert.equal(checkOriginScope("createPublisher", undefined), undefined);
        const bad: [unknown, RegExp][] = [
            [{ region: "x", otherRegions: [], home: true }, /origin\.region must be an AWS region name/],
            [
                { region: "us-east-1", otherRegions: "us-west-2", home: true },
                /origin\.otherRegions must be the table's other regions as a list/,
            ],
            [
                { region: "us-east-1", otherRegions: ["bad"], home: true },
                /origin\.otherRegions\[0\] must be an AWS region name/,
            ],
            [
                { region: "us-east-1", otherRegions: ["us-east-1"], home: true },
                /lists the relay's own region us-east-1/,
            ],
            [{ region: "us-east-1", otherRegions: [], home: "yes" }, /origin\.home must be true/],
        ];
        for (const [scope, message] of bad)
            assert.throws(() => checkOriginScope("createPublisher", scope as OriginScope), message);
        assert.equal(checkRegionName("w", "region", "ap-southeast-5"), "ap-southeast-5");
    });

    it("the handlers read their origin scope from the environment, and refuse a partial or malformed one", () => {
        const base = {
            [ENV.tableName]: "orders-outbox",
            [ENV.topicArn]: "arn:aws:sns:us-west-2:111111111111:events",
            [ENV.dlqUrl]: "https://sqs.us-west-2.amazonaws.com/111111111111/dlq",
        };
        assert.equal(readHandlerEnvironment(base).origin, undefined, "unset: a single-region outbox");
        assert.deepEqual(
            readHandlerEnvironment({
                ...base,
                [ENV.originRegion]: "us-west-2",
                [ENV.otherRegions]: "us-east-1, eu-west-1",
                [ENV.homeRegion]: "false",
            }).origin,
            { region: "us-west-2", otherRegions: ["us-east-1", "eu-west-1"], home: false },
        );
        assert.throws(
            () => readHandlerEnvironment({ ...base, [ENV.originRegion]: "us-west-2", [ENV.otherRegions]: "us-east-1" }),
            /OUTBOX_HOME_REGION is undefined; with OUTBOX_ORIGIN_REGION set it must be "true"/,
        );
        assert.throws(
            () => readHandlerEnvironment({ ...base, [ENV.homeRegion]: "true" }),
            /OUTBOX_HOME_REGION is set but OUTBOX_ORIGIN_REGION is not/,
        );
        assert.throws(
            () =>
                readHandlerEnvironment({
                    ...base,
                    [ENV.originRegion]: "us-west-2",
                    [ENV.otherRegions]: "us-west-2",
                    [ENV.homeRegion]: "true",
                }),
            /origin\.otherRegions lists the relay's own region us-west-2/,
        );
    });
});
