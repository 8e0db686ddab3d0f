/**
 * DynamoDB's own clock, as the sweeper reads it: the HTTP `Date` header of an answer to one of its commands. The
 * sweeper's cutoff compares its clock with the records' `created_at`, so a sweeper clock that runs slow would see
 * every fresh record as stamped far ahead (which it takes as due at once), and one that runs fast would see it as
 * old: either way it would publish records the stream path is publishing. DynamoDB's clock is a reference every
 * sweeper of the table shares. The header is captured by a middleware added to the one command (the client, which
 * the user may have injected, is not changed); a client that gives no header (a fake) leaves the sweeper on its
 * own clock.
 *
 * @packageDocumentation
 */

/**
 * How far the sweeper's clock may disagree with DynamoDB's (5 s), beyond what the measurement itself leaves open
 * (the header's whole second and the call's round trip), before a sweep takes DynamoDB's time for its cutoff and
 * logs a warning. Well under the default `sweepAfter` (120 s): a skew below it moves the cutoff by less than that.
 */
export const SWEEPER_CLOCK_TOLERANCE_MS = 5_000;

/** The width of the header's time: HTTP dates have whole seconds. */
const DATE_RESOLUTION_MS = 1_000;

/** Where {@link captureServerDate} records what it read. */
export interface ServerDate {
    /** The last `Date` header read, epoch ms (whole seconds); `undefined` when none was. */
    dateMs: number | undefined;
}

/** The part of an SDK v3 command this module touches. */
interface CommandWithStack {
    readonly middlewareStack: { add(middleware: never, options: { step: "deserialize"; name: string }): void };
}

/** What a deserialize-step handler resolves to: the raw HTTP response among the rest. */
interface DeserializeResult {
    readonly response?: { readonly headers?: Record<string, string | undefined> };
}

/**
 * Make `command` record the `Date` header of its answer into `into` (each attempt's answer overwrites the last).
 * Only the command is changed: its own middleware stack, which the client merges with its own when it sends it.
 *
 * @param command - An SDK v3 command, before it is sent.
 * @param into - Where the time goes.
 * @returns the same command.
 */
export function captureServerDate<C extends CommandWithStack>(command: C, into: ServerDate): C {
    const middleware =
        (next: (args: unknown) => Promise<DeserializeResult>) =>
        async (args: unknown): Promise<DeserializeResult> => {
            const result = await next(args);
            const header = result.response?.headers?.date;
            const ms = typeof header === "string" ? Date.parse(header) : Number.NaN;
            if (Number.isFinite(ms)) into.dateMs = ms;
            return result;
        };
    command.middlewareStack.add(middleware as never, { step: "deserialize", name: "dynamodbOutboxServerDate" });
    return command;
}

/** The time a sweep uses, and how its clock compares with DynamoDB's. */
export interface SweepTime {
    /** The time to sweep by, epoch ms: the sweeper's clock, or DynamoDB's when they disagree. */
    readonly nowMs: number;
    /**
     * DynamoDB's clock minus the sweeper's, ms: the middle of what the header allows; `undefined` when no header was
     * read.
     */
    readonly offsetMs: number | undefined;
    /** Whether {@link SweepTime.nowMs} is DynamoDB's time (the clocks disagreed by more than the tolerance). */
    readonly serverTime: boolean;
}

/**
 * Choose the time a sweep uses. The answer was stamped between `sentAt` and `answeredAt` on the sweeper's clock, at
 * a server time in `[dateMs, dateMs + 1 s)`, so DynamoDB's clock minus the sweeper's lies in
 * `[dateMs − answeredAt, dateMs + 1 s − sentAt]`. When that whole range is further than `toleranceMs` from 0, the
 * clocks disagree, and the sweep takes `answeredAt` plus the middle of the range.
 *
 * @param sentAt - The sweeper's clock before the command was sent, epoch ms.
 * @param answeredAt - The sweeper's clock after its answer came, epoch ms.
 * @param dateMs - The answer's `Date` header, epoch ms, or `undefined` when there was none.
 * @param toleranceMs - How far the clocks may disagree beyond the measurement's own width. @default SWEEPER_CLOCK_TOLERANCE_MS
 */
export function sweepTime(
    sentAt: number,
    answeredAt: number,
    dateMs: number | undefined,
    toleranceMs: number = SWEEPER_CLOCK_TOLERANCE_MS,
): SweepTime {
    if (dateMs === undefined) return { nowMs: answeredAt, offsetMs: undefined, serverTime: false };
    const lowest = dateMs - answeredAt;
    const highest = dateMs + DATE_RESOLUTION_MS - Math.min(sentAt, answeredAt);
    const offsetMs = Math.round((lowest + highest) / 2);
    const serverTime = lowest > toleranceMs || highest < -toleranceMs;
    return { nowMs: serverTime ? answeredAt + offsetMs : answeredAt, offsetMs, serverTime };
}
