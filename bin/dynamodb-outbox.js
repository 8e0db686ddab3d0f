#!/usr/bin/env node
// The package.json `bin`. In an installed package it runs the compiled CLI (dist/bin/dynamodb-outbox.js): plain
// Node, no ts-node. In a source checkout (bin/dynamodb-outbox.ts sits next to this file) it compiles the
// TypeScript entry on the fly with ts-node (transpile only), so a stale dist/ never runs instead of the sources.
// `project` points at this package's tsconfig, which also makes ts-node compile these files when a checkout sits
// under node_modules (its ignore rule is relative to the tsconfig's folder).
"use strict";
const fs = require("node:fs");
const path = require("node:path");
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

function loadEntry() {
    const source = path.join(__dirname, "dynamodb-outbox.ts");
    if (!fs.existsSync(source)) return require("../dist/bin/dynamodb-outbox.js");
    let tsNode;
    try {
        // eslint-disable-next-line import-x/no-extraneous-dependencies -- only a checkout runs the sources; an install runs dist/
        tsNode = require("ts-node");
    } catch (err) {
        process.stderr.write(
            `dynamodb-outbox: running from the TypeScript sources needs ts-node (${err.message}); install it (npm install ts-node typescript) or build the package (npm run build) and run the installed package\n`,
        );
        process.exit(1);
    }
    tsNode.register({ transpileOnly: true, project: path.join(__dirname, "..", "tsconfig.json") });
    return require(source);
}

loadEntry()
    .runFromProcess()
    .catch((err) => {
        process.stderr.write(`dynamodb-outbox: ${err && err.stack ? err.stack : err}\n`);
        process.exitCode = 1;
    });
