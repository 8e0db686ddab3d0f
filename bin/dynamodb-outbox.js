#!/usr/bin/env node
// The package.json `bin`: compiles the TypeScript entry on the fly (ts-node, transpile only) and runs it.
// `project` points at this package's tsconfig, which also makes ts-node compile these files when the package
// sits under node_modules (its ignore rule is relative to the tsconfig's folder).
"use strict";
const path = require("node:path");
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
let tsNode;
try {
    tsNode = require("ts-node");
} catch (err) {
    process.stderr.write(`dynamodb-outbox: cannot load ts-node (${err.message}); install it next to this package: npm install ts-node typescript\n`);
    process.exit(1);
}
tsNode.register({ transpileOnly: true, project: path.join(__dirname, "..", "tsconfig.json") });
require("./dynamodb-outbox.ts")
    .runFromProcess()
    .catch((err) => {
        process.stderr.write(`dynamodb-outbox: ${err && err.stack ? err.stack : err}\n`);
        process.exitCode = 1;
    });
