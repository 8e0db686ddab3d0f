import assert from "node:assert/strict";
import * as streams from "@aws-sdk/client-dynamodb-streams";
import { isOutboxError } from "../../../runtime/errors";
import { STREAMS_PACKAGE, streamsSdk } from "../../../runtime/testing/mapping/streams-sdk";

/** A loader that finds nothing, as Node's require when the package is not installed. */
const notInstalled = (name: string): never => {
    throw Object.assign(new Error(`Cannot find module '${name}'`), { code: "MODULE_NOT_FOUND" });
};

describe("the test kit's streams client (an optional peer)", () => {
    it("is @aws-sdk/client-dynamodb-streams, required by name", () => {
        const asked: string[] = [];
        const sdk = streamsSdk((name) => (asked.push(name), streams));
        assert.deepEqual(asked, ["@aws-sdk/client-dynamodb-streams"]);
        assert.equal(sdk.GetRecordsCommand, streams.GetRecordsCommand);
        assert.equal(streamsSdk().GetRecordsCommand, streams.GetRecordsCommand, "the default loader is require");
    });

    it("not installed: INVALID_CONFIG naming the package and the npm command, the loader's error as its cause", () => {
        assert.throws(
            () => streamsSdk(notInstalled),
            (err: unknown) => {
                assert.ok(isOutboxError(err));
                assert.equal(err.code, "INVALID_CONFIG");
                assert.equal(err.transient, false);
                assert.match(
                    err.message,
                    /^startLocalEventSourceMapping needs @aws-sdk\/client-dynamodb-streams, which is not installed: it is an optional peer dependency/,
                );
                assert.match(err.message, /npm install --save-dev @aws-sdk\/client-dynamodb-streams\.$/);
                assert.deepEqual(err.context, { package: STREAMS_PACKAGE });
                assert.match(String((err.cause as Error).message), /Cannot find module/);
                return true;
            },
        );
    });

    it("a broken install is not a missing one: any other load error goes through as it is", () => {
        const broken = new SyntaxError("Unexpected token");
        assert.throws(
            () =>
                streamsSdk(() => {
                    throw broken;
                }),
            (err: unknown) => err === broken,
        );
    });
});
