/**
 * The args and the class stay what Pulumi's component analyzer accepts, checked on the type checker's view of
 * `components/args.ts` and `components/outbox.ts` (`tests/support/component-shape.ts`), not on their text.
 * The second test feeds the same walker mutated copies of the two files (in memory, the files are untouched) and
 * expects each mutation to be named: it fails if the walker stops seeing what it exists to catch.
 */
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import type * as ts from "typescript";
import { ComponentShape, WalkedTypes, componentShape } from "../../support/component-shape";

const ROOT = path.join(__dirname, "..", "..", "..");
const ARGS_FILE = path.join(ROOT, "components", "args.ts");
const OUTBOX_FILE = path.join(ROOT, "components", "outbox.ts");

/** `text` with `insert` placed right after the first occurrence of `anchor` (which must exist). */
function after(text: string, anchor: string, insert: string): string {
    const at = text.indexOf(anchor);
    assert.ok(at >= 0, `anchor not found: ${anchor}`);
    return text.slice(0, at + anchor.length) + insert + text.slice(at + anchor.length);
}

describe("Outbox stays analyzer-clean (type checker walk of the args and the class)", function () {
    this.timeout(120_000);
    let clean: ComponentShape;
    let program: ts.Program;
    let walked: WalkedTypes;

    before(() => {
        ({ shape: clean, program, walked } = componentShape());
    });

    it("has no union but T | undefined, no function-typed field, no class property that is not an output", () => {
        assert.deepEqual(clean.problems, []);
        assert.ok(
            clean.inputs.includes("transform") && clean.inputs.includes("maximumRetryAttempts"),
            clean.inputs.join(", "),
        );
        assert.ok(clean.outputs.includes("tableName"), clean.outputs.join(", "));
        assert.deepEqual(walked.own, [
            "OutboxArgs",
            "OutboxCloudEvents",
            "OutboxAlarmThresholds",
            "OutboxTableIndex",
            "OutboxVpc",
            "OutboxTransforms",
            "OutboxRoleArgs",
            "OutboxRolePolicyAttachmentArgs",
            "OutboxPermissionArgs",
            "OutboxMetricAlarmArgs",
            "OutboxBucketArgs",
            "OutboxBucketPolicyArgs",
        ]);
        assert.ok(
            clean.inputs.includes("alarmThresholds") &&
                clean.inputs.includes("alarmActions") &&
                clean.outputs.includes("alarmArns"),
            "the alarm args and output are walked",
        );
        // The AWS args `transform` takes, which the analyzer copies into the package schema.
        assert.ok(
            walked.installed.includes("TableArgs") &&
                walked.installed.includes("FunctionArgs") &&
                walked.installed.length > 40,
            walked.installed.join(", "),
        );
    });

    it("names each analyzer-breaking mutation, and accepts a TS enum and an as-const object", () => {
        const args = fs.readFileSync(ARGS_FILE, "utf8");
        const outbox = fs.readFileSync(OUTBOX_FILE, "utf8");
        const mutatedArgs =
            after(
                args,
                "export interface OutboxArgs {",
                [
                    "",
                    `    /** @default undefined */ mode?: "fast" | "safe";`,
                    `    /** @default undefined */ level?: OutboxLevel;`,
                    `    /** @default undefined */ priority?: OutboxPriority;`,
                    `    /** @default undefined */ region?: string | null;`,
                    `    /** @default undefined */ onEvent?: (id: string) => void;`,
                    `    /** @default undefined */ limits?: { reads: number };`,
                    `    /** @default undefined */ describe?(): string;`,
                    "",
                ].join("\n"),
            ) +
            [
                "",
                `export const OutboxLevel = { Low: "low", High: "high" } as const;`,
                `export type OutboxLevel = (typeof OutboxLevel)[keyof typeof OutboxLevel];`,
                `export enum OutboxPriority { Low = "low", High = "high" }`,
                "",
            ].join("\n");
        const mutatedOutbox = after(
            outbox,
            "export class Outbox extends pulumi.ComponentResource {",
            '\n    private readonly cache = new Map<string, string>();\n    public readonly label: string = "x";\n',
        );
        const { shape } = componentShape({
            overrides: { [ARGS_FILE]: mutatedArgs, [OUTBOX_FILE]: mutatedOutbox },
            oldProgram: program,
            walkInstalledTypes: false,
        });
        const about = (where: string): string[] => shape.problems.filter((p) => p.startsWith(`${where}:`));
        assert.match(
            about("OutboxArgs.mode").join(),
            /union of literals that is neither a TS enum nor an as-const object/,
        );
        assert.match(about("OutboxArgs.region").join(), /a union type/);
        assert.match(about("OutboxArgs.onEvent").join(), /a function type/);
        assert.match(about("OutboxArgs.limits").join(), /inline or aliased object type/);
        assert.match(about("OutboxArgs.describe").join(), /a method/);
        assert.match(about("Outbox.cache").join(), /not a public readonly Output/);
        assert.match(about("Outbox.label").join(), /not a public readonly Output/);
        assert.deepEqual(about("OutboxArgs.level"), [], "an as-const object is an enum to the analyzer");
        assert.deepEqual(about("OutboxArgs.priority"), [], "a TS enum is an enum to the analyzer");
        assert.equal(shape.problems.length, 7, shape.problems.join("\n"));
        assert.deepEqual(shape.outputs, clean.outputs, "the mutated fields are not outputs");
    });
});
