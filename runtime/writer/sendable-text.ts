/**
 * The characters a message may carry to SNS and the DLQ, as the writer checks them: the error text that names a
 * character SQS or SNS refuse, where it sits, and the fix.
 *
 * @packageDocumentation
 */
import { unsendableCharacter } from "../record/message";

const ALLOWED_CHARACTERS =
    "tab, LF, CR, U+0020-U+D7FF, U+E000-U+FFFD and U+10000-U+10FFFF: no other control characters (NUL among them), no U+FFFE or U+FFFF, no lone surrogates";

/** A refused character: the error text, the character (`U+XXXX`) and its index. */
export interface CharacterProblem {
    readonly message: string;
    readonly codePoint: string;
    readonly position: number;
}

/** The problem of `field` holding the character `codePoint` at `position`. */
export function characterAt(field: string, codePoint: string, position: number): CharacterProblem {
    return {
        message: `${field} holds ${codePoint} at index ${position}, which SQS (the DLQ) and SNS refuse in a message body or attribute (they accept only ${ALLOWED_CHARACTERS}); remove or replace it (e.g. with U+FFFD), or send the data base64-encoded`,
        codePoint,
        position,
    };
}

/** Why `text` cannot travel to SNS and the DLQ (the character, its index, and the fix), or `undefined`. */
export function characterProblem(text: string, field: string): CharacterProblem | undefined {
    const bad = unsendableCharacter(text);
    return bad === undefined ? undefined : characterAt(field, bad.codePoint, bad.index);
}

/** Where a character found in a string's JSON form sits in the string itself (JSON leaves U+FFFE/U+FFFF raw). */
export function rawIndex(text: string, codePoint: string): number {
    return text.indexOf(String.fromCodePoint(Number.parseInt(codePoint.slice(2), 16)));
}
