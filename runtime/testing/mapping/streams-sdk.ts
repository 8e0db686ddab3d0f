/**
 * `@aws-sdk/client-dynamodb-streams`, which only the local event source mapping sends through, is an optional peer
 * dependency of this package (docs/packaging.md): an application that writes or relays events never installs it.
 * The mapping's caller builds the `DynamoDBStreamsClient` it passes, so the package is in their project; this
 * requires it when a mapping starts (Node's cache keeps it), and names the package to install when it does not
 * resolve, instead of Node's `Cannot find module` from inside the test kit.
 *
 * @packageDocumentation
 */
import type * as Streams from "@aws-sdk/client-dynamodb-streams";
import { OutboxError } from "../../errors";

/** The package the local mapping reads streams through. */
export const STREAMS_PACKAGE = "@aws-sdk/client-dynamodb-streams";

/**
 * `@aws-sdk/client-dynamodb-streams`, required on first use.
 *
 * @param load - how the package is required. @default require
 * @throws OutboxError `INVALID_CONFIG` naming the package and the npm command when it is not installed; any other
 * load error as it is.
 */
export function streamsSdk(load: (name: string) => unknown = require): typeof Streams {
    try {
        return load(STREAMS_PACKAGE) as typeof Streams;
    } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") throw err;
        throw new OutboxError(
            "INVALID_CONFIG",
            `startLocalEventSourceMapping needs ${STREAMS_PACKAGE}, which is not installed: it is an optional peer dependency of dynamodb-outbox, which npm does not install by itself. Install it next to it: npm install --save-dev ${STREAMS_PACKAGE}.`,
            { cause: err, context: { package: STREAMS_PACKAGE } },
        );
    }
}
