/**
 * An in-memory stand-in for the two S3 calls of the claim check, for the unit tier (no emulator there). It records
 * every input, and fails or answers as a test tells it: it shows what the writer sends (the SHA-256 checksum and
 * `If-None-Match: *`, which fauxqs neither verifies nor enforces) and how it takes S3's answers. The integration
 * tests use fauxqs's real S3.
 */
import type { PayloadGetInput, PayloadObjectClient, PayloadPutInput } from "../../../runtime/claim-check/object-client";

/** An SDK-shaped service error. */
export function s3Error(name: string, status: number): Error {
    return Object.assign(new Error(`${name} (fake)`), { name, $metadata: { httpStatusCode: status } });
}

export class MemoryObjects implements PayloadObjectClient {
    readonly puts: PayloadPutInput[] = [];
    readonly gets: PayloadGetInput[] = [];
    readonly objects = new Map<string, Uint8Array>();
    /** Thrown by the next puts, in order. */
    readonly putFailures: Error[] = [];

    async putObject(input: PayloadPutInput): Promise<unknown> {
        this.puts.push(input);
        const failure = this.putFailures.shift();
        if (failure !== undefined) throw failure;
        this.objects.set(`${input.Bucket}/${input.Key}`, new Uint8Array(input.Body));
        return {};
    }

    async getObject(input: PayloadGetInput): Promise<{ Body: { transformToByteArray(): Promise<Uint8Array> } }> {
        this.gets.push(input);
        const bytes = this.objects.get(`${input.Bucket}/${input.Key}`);
        if (bytes === undefined) throw s3Error("NoSuchKey", 404);
        return { Body: { transformToByteArray: async () => bytes } };
    }
}
