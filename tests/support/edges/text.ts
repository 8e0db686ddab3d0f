/**
 * The characters the generated messages are drawn from, by class, and text described compactly (a pattern repeated
 * to a length) so a case stays short to print and fast-check shrinks its length and its pattern apart.
 *
 * Each class costs differently where the text goes: `<`, `>` and `&` are one byte in a message and six in the
 * record's envelope (GoBridge's JSON writes `\u003c`); `"`, `\` and the tab, line feed and carriage return are two
 * in every JSON text; U+2028 and U+2029 are three bytes in UTF-8 and six in the envelope; an astral character is
 * four bytes and two UTF-16 units (the type's 128 is counted in units); a space is what a FIFO group id may not hold.
 * `refused` holds characters SQS and SNS refuse, which the writer must refuse in every field.
 *
 * @packageDocumentation
 */
import fc from "fast-check";

/** The character classes, each a few representatives. */
export const CHARACTER_CLASSES = {
    alnum: ["a", "Z", "7"],
    punctuation: ["#", "%", "-", "_", ".", ":", "/", "!", "~", "'", "*", "|", "@", "=", "+"],
    escapedInEnvelope: ["<", ">", "&"],
    escapedInJson: ['"', "\\"],
    space: [" "],
    whitespace: ["\t", "\n", "\r"],
    latin: ["é", "ß"],
    bmp: ["€", "中", "\uFFFD"],
    separator: ["\u2028", "\u2029"],
    astral: ["😀", "𝄞"],
    refused: ["\u0000", "\u0007", "\uFFFF", "\uD800"],
} as const;

/** A class name. */
export type CharacterClass = keyof typeof CHARACTER_CLASSES;

/** The printable ASCII classes: what an id, and a FIFO group id, may hold (SNS and SQS: alphanumerics and punctuation). */
export const ASCII_CLASSES: readonly CharacterClass[] = ["alnum", "punctuation", "escapedInEnvelope", "escapedInJson"];

/** Every class a partition, type, ordering key or header value may hold on a standard destination. */
export const SENDABLE_CLASSES: readonly CharacterClass[] = [
    ...ASCII_CLASSES,
    "space",
    "whitespace",
    "latin",
    "bmp",
    "separator",
    "astral",
];

/**
 * Text as a pattern repeated: `units` code points of it, or the longest repetition within `bytes` UTF-8 bytes padded
 * with `a` to exactly that many.
 */
export interface Text {
    readonly pattern: readonly string[];
    readonly units?: number;
    readonly bytes?: number;
}

/** The string a {@link Text} describes. */
export function textOf(text: Text, prefix = ""): string {
    const out: string[] = Array.from(prefix);
    let bytes = Buffer.byteLength(prefix);
    const pattern = text.pattern.length > 0 ? text.pattern : ["a"];
    for (let i = 0; ; i += 1) {
        const c = pattern[i % pattern.length]!;
        if (text.bytes !== undefined) {
            if (bytes + Buffer.byteLength(c) > text.bytes) break;
            bytes += Buffer.byteLength(c);
        } else if (out.length >= (text.units ?? 0)) break;
        out.push(c);
    }
    if (text.bytes !== undefined) out.push("a".repeat(Math.max(0, text.bytes - bytes)));
    return out.join("");
}

/** `count` code points of `pattern` repeated. */
export function filler(pattern: readonly string[], count: number): string {
    const chars = pattern.length > 0 ? pattern : ["a"];
    const whole = chars.join("").repeat(Math.floor(count / chars.length));
    return whole + chars.slice(0, count % chars.length).join("");
}

/**
 * A pattern of 1 to 4 characters from `classes`, and, one time in `outlierOneIn`, one from `outliers` (characters
 * the field may not hold: the writer must refuse them).
 */
export function pattern(
    classes: readonly CharacterClass[],
    outliers: readonly CharacterClass[] = [],
    outlierOneIn = 60,
): fc.Arbitrary<readonly string[]> {
    const chars = (from: readonly CharacterClass[]) =>
        fc.constantFrom(...from.flatMap((c) => CHARACTER_CLASSES[c] as readonly string[]));
    const allowed = fc.array(chars(classes), { minLength: 1, maxLength: 4 });
    if (outliers.length === 0) return allowed;
    return fc.oneof(
        { arbitrary: allowed, weight: outlierOneIn - 1 },
        {
            arbitrary: fc
                .tuple(allowed, chars(outliers), fc.nat())
                .map(([base, odd, at]) => [
                    ...base.slice(0, at % (base.length + 1)),
                    odd,
                    ...base.slice(at % (base.length + 1)),
                ]),
            weight: 1,
        },
    );
}

/** Text of `pattern` with a length from `units` (code points) or `bytes` (UTF-8). */
export function text(
    patterns: fc.Arbitrary<readonly string[]>,
    length: { readonly units?: fc.Arbitrary<number>; readonly bytes?: fc.Arbitrary<number> },
): fc.Arbitrary<Text> {
    const choices: fc.Arbitrary<Text>[] = [];
    if (length.units !== undefined)
        choices.push(fc.record({ pattern: patterns, units: length.units }) as fc.Arbitrary<Text>);
    if (length.bytes !== undefined)
        choices.push(fc.record({ pattern: patterns, bytes: length.bytes }) as fc.Arbitrary<Text>);
    return fc.oneof(...choices);
}

/**
 * A length: mostly short (1 to `short`), sometimes a few below `limit` or at it, now and then one or two past it
 * (which the writer must refuse). `shortWeight` against 3 for near and 1 for past.
 */
export function edgeLength(limit: number, short = 24, shortWeight = 12): fc.Arbitrary<number> {
    return fc.oneof(
        { arbitrary: fc.integer({ min: 1, max: short }), weight: shortWeight },
        { arbitrary: fc.integer({ min: Math.max(1, limit - 6), max: limit }), weight: 3 },
        { arbitrary: fc.integer({ min: limit + 1, max: limit + 2 }), weight: 1 },
    );
}
