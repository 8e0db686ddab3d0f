/**
 * The flag reader the three command lines share (cli/shared/flag-tokens.ts), on its own: Node's `util.parseArgs`
 * in strict mode decides, and the first word it refuses comes back named. The parsers' messages on top of it are
 * pinned in args.test.ts, tests/integration/cli/redrive.test.ts, tests/integration/faults/redrive.test.ts and
 * tests/e2e/demo/start-smoke.test.ts.
 */
import assert from "node:assert/strict";
import { parseArgs } from "node:util";
import { readFlags, type FlagTypes } from "../../../cli/shared/flag-tokens";

const FLAGS: FlagTypes = {
    table: { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
};

const flag = (name: string, value: string | undefined, rawName = `--${name}`) => ({
    kind: "flag",
    name,
    rawName,
    value,
});
const positional = (raw: string) => ({ kind: "positional", raw });

/** Whether Node's strict mode takes the line. */
function strictTakes(argv: string[]): boolean {
    try {
        parseArgs({ args: argv, options: FLAGS, strict: true, allowPositionals: true });
        return true;
    } catch {
        return false;
    }
}

describe("cli: the shared flag reader", () => {
    it("reads --flag value, --flag=value, -h and positional words in order, and keeps a repeated flag for the caller", () => {
        assert.deepEqual(readFlags(["verify", "--table", "t1", "--table=t2", "--json", "-h", "extra", "-"], FLAGS), {
            tokens: [
                positional("verify"),
                flag("table", "t1"),
                flag("table", "t2"),
                flag("json", undefined),
                flag("help", undefined, "-h"),
                positional("extra"),
                positional("-"),
            ],
        });
        assert.deepEqual(readFlags(["--table=-x"], FLAGS), { tokens: [flag("table", "-x")] });
    });

    it("stops at a valued flag with no value, or followed by a --word, and names it", () => {
        for (const argv of [["--table"], ["--table", "--json", "verify"], ["--table", "--"]]) {
            assert.deepEqual(
                readFlags(argv, FLAGS),
                { tokens: [], problem: { kind: "missing-value", name: "table", raw: "--table" } },
                argv.join(" "),
            );
        }
        assert.deepEqual(readFlags(["verify", "--json", "--table"], FLAGS), {
            tokens: [positional("verify"), flag("json", undefined)],
            problem: { kind: "missing-value", name: "table", raw: "--table" },
        });
    });

    it("refuses a valued flag followed by a word with one dash, as strict mode does, and hands the word back", () => {
        assert.deepEqual(readFlags(["--table", "-x", "verify"], FLAGS), {
            tokens: [],
            problem: { kind: "dash-value", name: "table", raw: "--table", value: "-x" },
        });
    });

    it("refuses a value on a boolean flag", () => {
        assert.deepEqual(readFlags(["--json=yes"], FLAGS), {
            tokens: [],
            problem: { kind: "value-on-boolean", name: "json", raw: "--json=yes", value: "yes" },
        });
        assert.deepEqual(readFlags(["--help="], FLAGS).problem, {
            kind: "value-on-boolean",
            name: "help",
            raw: "--help=",
            value: "",
        });
    });

    it("names an unknown flag as written up to its =, an unknown short word whole, and refuses -- as unknown", () => {
        assert.deepEqual(readFlags(["--force=a=b"], FLAGS).problem, {
            kind: "unknown",
            name: "force",
            flag: "--force",
            raw: "--force=a=b",
        });
        assert.deepEqual(readFlags(["--constructor"], FLAGS).problem, {
            kind: "unknown",
            name: "constructor",
            flag: "--constructor",
            raw: "--constructor",
        });
        assert.deepEqual(readFlags(["-x"], FLAGS).problem, { kind: "unknown", name: "x", flag: "-x", raw: "-x" });
        assert.deepEqual(readFlags(["-hx"], FLAGS), {
            tokens: [flag("help", undefined, "-h")],
            problem: { kind: "unknown", name: "x", flag: "-hx", raw: "-hx" },
        });
        assert.deepEqual(readFlags(["verify", "--", "x"], FLAGS), {
            tokens: [positional("verify")],
            problem: { kind: "unknown", name: "", flag: "--", raw: "--" },
        });
    });

    it("refuses every line Node's strict mode refuses, and takes every one it takes but --", () => {
        const lines = [
            ["--table", "t"],
            ["--table=-x"],
            ["-h", "v"],
            ["-hh"],
            ["--table", "-"],
            ["--table"],
            ["--table", "-x"],
            ["--table", "--json"],
            ["--json=1"],
            ["--nope"],
            ["-x"],
            ["-h=3"],
            ["-5"],
            ["--=x"],
        ];
        for (const argv of lines) {
            assert.equal(readFlags(argv, FLAGS).problem === undefined, strictTakes(argv), argv.join(" "));
        }
        assert.ok(strictTakes(["--"]) && readFlags(["--"], FLAGS).problem !== undefined);
    });
});
