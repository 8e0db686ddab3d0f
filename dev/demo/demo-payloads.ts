/**
 * `npm start -- --payload-bytes N`: events of any size in the demo. The writer offloads a payload past SNS's
 * 256 KiB to a bucket on fauxqs's S3 (the claim check), the relay publishes the pointer, and the consumer fetches
 * each payload and checks it (length and SHA-256, by `createPayloadResolver`) before it counts the delivery.
 *
 * @packageDocumentation
 */
import type { S3 } from "@aws-sdk/client-s3";
import { createPayloadResolver } from "../../runtime/claim-check/resolver";
import type { LargePayloadOptions } from "../../runtime/claim-check/offload";
import type { DeliveredOutboxMessage } from "../../runtime/inbox/delivery-formats";
import { createPayloadBucket, localPayloadObjects, payloadKeys } from "../emulators/local-s3";

/** The demo's payloads: the writer's option, the consumer's resolution, and the summary line. */
export interface DemoPayloads {
    /** `OutboxWriter`'s `largePayloads`. */
    readonly writerOption: LargePayloadOptions;
    /**
     * The body a delivered message (as `parseDelivery` read it) stands for: fetched and checked when it is a claim
     * check; `undefined` when that failed.
     */
    resolveBody(message: DeliveredOutboxMessage): Promise<string | undefined>;
    /** Payloads that could not be resolved, or resolved to another size than asked. */
    readonly failures: () => number;
    /** The summary line. */
    summary(): Promise<string>;
    /** Destroy the client. */
    stop(): void;
}

/**
 * Set up the demo's payload bucket on a local S3.
 *
 * @param endpoint - fauxqs's endpoint.
 * @param bytes - The payload size asked for.
 * @param runId - Keeps the bucket of this run apart.
 */
export async function startDemoPayloads(endpoint: string, bytes: number, runId: string): Promise<DemoPayloads> {
    const objects: S3 = localPayloadObjects(endpoint);
    const bucket = `outbox-demo-payloads-${runId}`;
    await createPayloadBucket(objects, bucket);
    const resolver = createPayloadResolver({ objects, bucket });
    let fetched = 0;
    let failures = 0;
    return {
        writerOption: { objects, bucket },
        async resolveBody(delivered) {
            try {
                const message = await resolver.resolveMessage(delivered);
                if (message.claimCheck !== undefined) fetched += 1;
                if (Buffer.byteLength(message.body) !== bytes)
                    throw new Error(`${Buffer.byteLength(message.body)} bytes, not ${bytes}`);
                return message.body;
            } catch {
                failures += 1;
                return undefined;
            }
        },
        failures: () => failures,
        async summary() {
            const stored = (await payloadKeys(objects, bucket)).length;
            return `  payloads   ${bytes} bytes each: ${stored} stored in S3 (bucket ${bucket}), ${fetched} fetched and checked (length, SHA-256) by the consumer, ${failures} failed`;
        },
        stop: () => objects.destroy(),
    };
}
