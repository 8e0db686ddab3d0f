/**
 * The schema's house rule, checked on the source text: no shipped file but runtime/schema.ts spells out an index
 * name, a projection, the stream view, the record prefix, the index key attributes or the id guard's key prefix
 * and holder attribute (comments may name them; code must read them from the schema). The layers' import rules
 * are the linter's (eslint.config.mjs, tests/unit/lint/lint.test.ts).
 */
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import {
    CLAIM_INDEX,
    EXPIRY_INDEX,
    EXPIRY_SHARDS_PK,
    ID_GUARD_PK_PREFIX,
    RECORD_ID_INDEX,
    RECORD_SK_PREFIX,
    STREAM_VIEW_TYPE,
    ATTR,
} from "../../runtime/schema";
import { OutboxProjectionType } from "../../components/args";

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

/**
 * Spellings allowed outside schema.ts, each for a reason. Pulumi's component schema analyzer reads an enum's
 * members only from string literals (a member initialized from schema.ts is "Unsupported initializer"), and
 * `OutboxProjectionType` is an enum of the multi-language schema.
 */
const ALLOWED_SPELLINGS: readonly string[] = [`${path.join("components", "args.ts")} spells "KEYS_ONLY"`];

/** The schema literals `text` spells out as string literals. */
function spelledLiterals(text: string): string[] {
    return SCHEMA_LITERALS.filter((l) => new RegExp(`["'\`]${l}["'\`]`).test(text));
}

describe("schema literals", () => {
    it("finds the sources", () => {
        assert.ok(sources("runtime").length > 20, `runtime files: ${sources("runtime").length}`);
    });

    it("flags a schema literal in code, but not in a comment", () => {
        assert.deepEqual(spelledLiterals('const i = "ClaimIndex";'), ["ClaimIndex"]);
        assert.deepEqual(spelledLiterals("const sk = `OUTBOX#${id}`;"), []);
        assert.deepEqual(spelledLiterals("const p = 'OUTBOX#';"), ["OUTBOX#"]);
        assert.deepEqual(
            spelledLiterals(stripComments('/** reads "ClaimIndex" */\n    // and "ExpiryIndex"\nconst x = 1;')),
            [],
        );
    });

    it("only runtime/schema.ts spells out index names, projections, the stream view and the record prefix", () => {
        const files = ["runtime", "components", "cli", "bin", "policy", "program"]
            .flatMap(sources)
            .concat(["index.ts"])
            .filter((f) => f !== path.join("runtime", "schema.ts"));
        const offenders = files
            .flatMap((f) => spelledLiterals(code(f)).map((l) => `${f} spells "${l}"`))
            .filter((o) => !ALLOWED_SPELLINGS.includes(o));
        assert.deepEqual(offenders, []);
    });

    it("the one allowed spelling, OutboxProjectionType's, is the schema's value", () => {
        assert.equal(OutboxProjectionType.KeysOnly, EXPIRY_INDEX.projectionType);
        assert.equal(OutboxProjectionType.KeysOnly, RECORD_ID_INDEX.projectionType);
    });
});
