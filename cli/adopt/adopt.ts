/**
 * `dynamodb-outbox adopt --from <region> --table <name> --region <region>`: on a global table, the region `--region`
 * takes over what the evacuated region `--from` left undelivered (`adoptRegion` in runtime/store/adopt.ts). The
 * adopted records are pending and stamped with `--region`; that region's sweeper delivers them.
 *
 * @packageDocumentation
 */
import { adoptRegion, type DynamoDbClientLike } from "../../runtime/store";
import type { Output } from "../shared/io";

/** The command's defaults. */
export const ADOPT_DEFAULTS = {
    /** The bound on the whole command: 5 minutes (it resumes: a second run takes up what is left). */
    timeoutMs: 300_000,
} as const;

/** What {@link runAdopt} needs. */
export interface AdoptCommand {
    /** A DynamoDB client of the region that takes over. */
    readonly client: DynamoDbClientLike;
    /** The outbox table. */
    readonly tableName: string;
    /** The evacuated region (`--from`). */
    readonly from: string;
    /** The region that takes over (`--region`, or the environment's). */
    readonly region: string;
    /** Where results go. */
    readonly out: Output;
}

/**
 * Adopt the evacuated region's records and report the counts.
 *
 * @returns The exit code: 0 when every partition was adopted; the runtime's error is thrown otherwise (main maps an
 *   `INVALID_CONFIG` to the usage exit, anything else to 1).
 */
export async function runAdopt(command: AdoptCommand): Promise<number> {
    const { out } = command;
    out.progress(`adopting ${command.from}'s undelivered records of ${command.tableName} into ${command.region}…`);
    const result = await adoptRegion({
        client: command.client,
        tableName: command.tableName,
        from: command.from,
        to: command.region,
    });
    out.line(
        `adopted ${result.adopted} record(s) from ${command.from} (${result.inFlight} were in flight there and may be published twice; ${result.moved} had moved); ${command.region}'s sweeper delivers them`,
    );
    out.result({
        command: "adopt",
        table: command.tableName,
        ok: true,
        from: command.from,
        region: command.region,
        ...result,
    });
    return 0;
}
