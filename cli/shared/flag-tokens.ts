/**
 * The one flag reader of the command lines (`dynamodb-outbox`, `dynamodb-outbox redrive` and `npm start`), on
 * Node's `util.parseArgs` in strict mode: a line strict mode refuses is refused.
 *
 * Strict mode throws at the first mistake with an English message and no fields, so the flag at fault would have
 * to be read back out of Node's text. The words are therefore also read with `strict: false`, which splits them the
 * same way, and the first token strict mode refuses comes back as a {@link FlagProblem} that names the flag, for
 * each command to word its own message. Each check below is one of strict mode's; the only rule added is that `--`
 * (the end of the flags) is refused like an unknown flag, since no command here takes words after it.
 *
 * @packageDocumentation
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { OutboxError } from "../../runtime/errors";

/** The flags a command knows, by name without dashes: whether each takes a value, and its one-letter alias. */
export type FlagTypes = Readonly<Record<string, { readonly type: "string" | "boolean"; readonly short?: string }>>;

/** One accepted word of the command line (or a flag and its value), in order. */
export type FlagToken =
    /**
     * A known flag. `rawName` is how it was written (`--help`, `-h`); `value` is a valued flag's value (from
     * `--x=v` or the next word), `undefined` for a boolean flag.
     */
    | { readonly kind: "flag"; readonly name: string; readonly rawName: string; readonly value: string | undefined }
    /** A word that is not a flag (a command, a stray word, `-`). */
    | { readonly kind: "positional"; readonly raw: string };

/** The first word strict mode refuses. `raw` is the word as written, `name` the flag's name without dashes. */
export type FlagProblem =
    /** A flag the command does not know, or `--`. `flag` is how it was written, up to an `=`, or the whole short word (`-hx`). */
    | { readonly kind: "unknown"; readonly name: string; readonly flag: string; readonly raw: string }
    /** A valued flag last on the line, or followed by a word starting with `--` (`--table --json`). */
    | { readonly kind: "missing-value"; readonly name: string; readonly raw: string }
    /**
     * A valued flag followed by a word starting with one dash (`--rate -1`): strict mode calls it ambiguous, as the
     * word may be a flag. `--rate=-1` is how the value is given.
     */
    | { readonly kind: "dash-value"; readonly name: string; readonly raw: string; readonly value: string }
    /** A boolean flag given a value (`--json=yes`). */
    | { readonly kind: "value-on-boolean"; readonly name: string; readonly raw: string; readonly value: string };

/** What {@link readFlags} read: the words accepted, in order, up to the first one refused. */
export interface FlagReading {
    readonly tokens: readonly FlagToken[];
    /** The first word refused; nothing after it is read. @default undefined (every word accepted) */
    readonly problem?: FlagProblem;
}

type Config = ParseArgsConfig & { readonly args: string[]; readonly tokens: true };
/** The fields of Node's option token read here. */
interface OptionToken {
    readonly name: string;
    readonly rawName: string;
    readonly value?: string | undefined;
    readonly inlineValue?: boolean | undefined;
}

/** Strict mode's verdict: its error, or `undefined` when it takes the line. */
function strictRefusal(config: Config): Error | undefined {
    try {
        parseArgs({ ...config, strict: true });
        return undefined;
    } catch (err) {
        if (err instanceof Error && String((err as { code?: unknown }).code).startsWith("ERR_PARSE_ARGS_")) return err;
        throw err;
    }
}

/** The check strict mode makes of one flag token, as a problem. */
function problemOf(token: OptionToken, flags: FlagTypes, raw: string): FlagProblem | undefined {
    const name = token.name;
    const spec = Object.hasOwn(flags, name) ? flags[name] : undefined;
    if (spec === undefined)
        return { kind: "unknown", name, flag: token.rawName.startsWith("--") ? token.rawName : raw, raw };
    if (spec.type === "boolean")
        return token.value === undefined ? undefined : { kind: "value-on-boolean", name, raw, value: token.value };
    if (token.value === undefined) return { kind: "missing-value", name, raw };
    // Strict mode's "ambiguous": a separate next word that looks like a flag.
    if (token.inlineValue || token.value.length < 2 || !token.value.startsWith("-")) return undefined;
    return token.value.startsWith("--")
        ? { kind: "missing-value", name, raw }
        : { kind: "dash-value", name, raw, value: token.value };
}

/**
 * Read `argv` against `flags`, in order, up to the first word strict mode refuses.
 *
 * @param argv - The words, e.g. `["verify", "--table", "orders-outbox"]`.
 * @param flags - The flags the command knows.
 * @throws OutboxError `INVALID_CONFIG`, with Node's message and its error as `cause`, if strict mode refuses a line
 *   in which no word is found at fault (it never is accepted).
 */
export function readFlags(argv: readonly string[], flags: FlagTypes): FlagReading {
    const config: Config = { args: [...argv], options: flags, allowPositionals: true, tokens: true };
    const refusal = strictRefusal(config);
    const tokens: FlagToken[] = [];
    for (const token of parseArgs({ ...config, strict: false }).tokens) {
        const raw = argv[token.index] as string;
        if (token.kind === "option-terminator")
            return { tokens, problem: { kind: "unknown", name: "", flag: "--", raw } };
        if (token.kind === "positional") {
            tokens.push({ kind: "positional", raw });
            continue;
        }
        const problem = problemOf(token, flags, raw);
        if (problem !== undefined) return { tokens, problem };
        tokens.push({ kind: "flag", name: token.name, rawName: token.rawName, value: token.value });
    }
    if (refusal !== undefined) {
        throw new OutboxError("INVALID_CONFIG", `${refusal.message} (in ${JSON.stringify(argv)})`, { cause: refusal });
    }
    return { tokens };
}
