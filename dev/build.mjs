// `npm run build`: compiles the package into dist/. Plain Node, no ts-node: it runs in `prepack` (before `npm pack`
// and `npm publish`) and in the toolchain workspace's `prepare` (after `npm install` or `npm ci` in a checkout).
// What goes into dist/ is set by tsconfig.build.json; docs/packaging.md says why each choice was made.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DIST = path.join(ROOT, "dist");
const require = createRequire(import.meta.url);
const TSC = require.resolve("typescript/bin/tsc");
const esbuild = require("esbuild");

/** Runs tsc on tsconfig.build.json with `flags`; stops the build with tsc's exit code if it fails. */
function tsc(...flags) {
    const run = spawnSync(process.execPath, [TSC, "-p", path.join(ROOT, "tsconfig.build.json"), ...flags], {
        cwd: ROOT,
        stdio: "inherit",
    });
    if (run.status !== 0) {
        process.stderr.write(`build: tsc ${flags.join(" ")} failed (exit ${run.status ?? run.signal})\n`);
        process.exit(run.status ?? 1);
    }
}

// 1. Start from an empty dist/. A module deleted or renamed in the sources must not survive from an earlier
//    build: an installed package's Lambda archive takes every .js file under dist/runtime.
fs.rmSync(DIST, { recursive: true, force: true });

// 2. The JavaScript, without comments. This pass also type-checks the shipped code. Every Lambda archive of an
//    installed package carries dist/runtime's .js files, and comments would add about 130 KB to each.
tsc("--removeComments", "--declaration", "false");

// 3. The declarations, with their comments, so that editors show the TSDoc. tsc has one removeComments for both
//    outputs, hence this second pass. It skips the type check (--noCheck): pass 2 checked the same program.
tsc("--emitDeclarationOnly", "--noCheck");

// 4. The compiled policy pack, runnable as `pulumi preview --policy-pack node_modules/dynamodb-outbox/dist/policy`:
//    Pulumi reads PulumiPolicy.yaml and the folder's package.json (its version and its main, now the .js entry).
fs.copyFileSync(path.join(ROOT, "policy", "PulumiPolicy.yaml"), path.join(DIST, "policy", "PulumiPolicy.yaml"));
const pack = JSON.parse(fs.readFileSync(path.join(ROOT, "policy", "package.json"), "utf8"));
const compiledPack = {
    ...pack,
    main: "index.js",
    description:
        "The dynamodb-outbox policy pack, compiled: pulumi preview --policy-pack node_modules/dynamodb-outbox/dist/policy",
};
fs.writeFileSync(path.join(DIST, "policy", "package.json"), JSON.stringify(compiledPack, null, 2));

// 5. The relay's Lambda module as one file. An installed package's publisher and sweeper archives carry what
//    dist/runtime/relay/lambda.js loads (components/code-path.ts); as 72 files, each deflated on its own in the zip,
//    that was 89.6 KB, and as one file it deflates to about 64 KB. esbuild bundles tsc's own CommonJS output, not
//    the sources: each module keeps its code and its scope (a __commonJS wrapper apiece, so nothing is renamed),
//    and nothing is minified. The AWS SDK clients stay requires (the Lambda runtime provides them); node: built-ins
//    stay requires too (platform node). The rest of dist/runtime is left as tsc wrote it, for the runtime entry.
const RELAY_ENTRY = path.join(DIST, "runtime", "relay", "lambda.js");
const bundled = await esbuild.build({
    entryPoints: [RELAY_ENTRY],
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node22",
    external: ["@aws-sdk/*", "@smithy/*"],
    legalComments: "none",
    write: false,
    metafile: true,
    logLevel: "warning",
});
const outside = Object.keys(bundled.metafile.inputs).filter(
    (input) => !path.resolve(ROOT, input).startsWith(path.join(DIST, "runtime") + path.sep),
);
if (outside.length > 0) {
    process.stderr.write(
        `build: the relay bundle would take in modules from outside dist/runtime: ${outside.join(", ")}\n`,
    );
    process.exit(1);
}
fs.writeFileSync(RELAY_ENTRY, bundled.outputFiles[0].contents);
