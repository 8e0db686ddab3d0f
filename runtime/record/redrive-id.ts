/**
 * The id a redriven dead letter is written back with. The redrive writes it, and the claim check's resolver knows a
 * redriven record's pointer by it, so it sits below them both.
 *
 * @packageDocumentation
 */
import { createHash } from "node:crypto";

/** The prefix of a redriven record's id. */
export const REDRIVE_ID_PREFIX = "redrive.";

/** The longest record id (the SNS FIFO deduplication id limit). */
const MAX_ID_LENGTH = 128;

/** The writer's id alphabet: printable ASCII without spaces. */
const ID_CHARACTERS = /^[\x21-\x7e]+$/;

/**
 * The id of the record a DLQ message is redriven as: `redrive.<original id>`, or `redrive.<sha-256 of it, hex>`
 * when that would exceed 128 characters or hold a character the writer's ids may not (a space, a non-ASCII one: a
 * record `OutboxStore.persist` or GoBridge wrote may have such an id). Deterministic, so a repeated redrive of the
 * same message collides with the record it already wrote.
 *
 * @param originalId - The dead-lettered record's id.
 */
export function redriveRecordId(originalId: string): string {
    const plain = `${REDRIVE_ID_PREFIX}${originalId}`;
    return plain.length <= MAX_ID_LENGTH && ID_CHARACTERS.test(originalId)
        ? plain
        : `${REDRIVE_ID_PREFIX}${createHash("sha256").update(originalId, "utf8").digest("hex")}`;
}
