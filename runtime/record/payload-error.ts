/**
 * The error for a payload the package refuses. The writer's checks and the claim check's offload both throw it, so
 * it sits below them both.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../errors";

/** An `INVALID_PAYLOAD` error: the writer refuses what a message or a write holds. */
export function invalidPayload(
    message: string,
    context: Record<string, string | number | undefined> = {},
): OutboxError {
    return new OutboxError("INVALID_PAYLOAD", message, { context });
}
