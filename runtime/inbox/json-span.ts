/**
 * The text of one value inside a JSON document, as it is written there: so a payload carried inside an envelope
 * (an EventBridge event's `detail.payload`) reaches the consumer as its own text, and a number beyond 2^53 or a
 * `1.0` is not changed by a `JSON.parse` and `JSON.stringify` round trip.
 *
 * @packageDocumentation
 */

/** Where a JSON value starts and ends in its document. */
interface Span {
    readonly start: number;
    readonly end: number;
}

function skipSpace(text: string, i: number): number {
    while (i < text.length && " \n\r\t".includes(text[i]!)) i += 1;
    return i;
}

/** The end of the string that starts at `i` (at its opening quote). */
function stringEnd(text: string, i: number): number {
    let j = i + 1;
    while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
    return j + 1;
}

/** The end of the object or array that starts at `i`. */
function containerEnd(text: string, i: number): number {
    let depth = 0;
    for (let j = i; j < text.length; j += 1) {
        const c = text[j];
        if (c === '"') j = stringEnd(text, j) - 1;
        else if (c === "{" || c === "[") depth += 1;
        else if ((c === "}" || c === "]") && --depth === 0) return j + 1;
    }
    return text.length;
}

/** The end of the value that starts at `i` (at its first character, after any space). */
function valueEnd(text: string, i: number): number {
    const c = text[i];
    if (c === '"') return stringEnd(text, i);
    if (c === "{" || c === "[") return containerEnd(text, i);
    let j = i;
    while (j < text.length && !" \n\r\t,]}".includes(text[j]!)) j += 1;
    return j;
}

/**
 * The span of member `key`'s value in the object that starts at `i`; the last one when the name occurs twice, as in
 * `JSON.parse`. `undefined` when the value there is not an object, or has no such member.
 */
function memberSpan(text: string, i: number, key: string): Span | undefined {
    if (text[i] !== "{") return undefined;
    let found: Span | undefined;
    let j = skipSpace(text, i + 1);
    while (j < text.length && text[j] === '"') {
        const nameEnd = stringEnd(text, j);
        const start = skipSpace(text, skipSpace(text, nameEnd) + 1);
        const end = valueEnd(text, start);
        if ((JSON.parse(text.slice(j, nameEnd)) as string) === key) found = { start, end };
        j = skipSpace(text, end);
        if (text[j] === ",") j = skipSpace(text, j + 1);
    }
    return found;
}

/**
 * The text of the value at `path` (object member names, outermost first) in a JSON document, exactly as written
 * there; `undefined` when a member on the path is missing or not an object. The document must be valid JSON (parse
 * it first): the scan trusts its syntax.
 *
 * @param text - A valid JSON document.
 * @param path - Member names, e.g. `["detail", "payload"]`.
 */
export function jsonTextAt(text: string, path: readonly string[]): string | undefined {
    let span: Span | undefined = { start: skipSpace(text, 0), end: text.length };
    for (const key of path) {
        span = memberSpan(text, span.start, key);
        if (span === undefined) return undefined;
    }
    return text.slice(span.start, span.end);
}
