/**
 * The fault plan at work: which rule fires on a call or a batch entry (the first that matches, within its
 * `times`, at its `rate` from the server's seeded RNG, so a failing run replays exactly), and the error each
 * whole-call fault answers with.
 *
 * @packageDocumentation
 */
import { seededRandom } from "../seeded-random";
import { ApiError } from "./api-error";
import type { CallFaultKind, CallFaultRule, CallInfo, EntryFaultRule, EntryInfo, FaultPlan } from "./types";

interface CallFaultDefinition {
    readonly status: number;
    readonly type: "Sender" | "Receiver";
    readonly message: string;
}

const CALL_FAULTS: Readonly<Record<string, CallFaultDefinition>> = {
    InternalError: { status: 500, type: "Receiver", message: "Internal error (injected)" },
    Throttling: { status: 400, type: "Sender", message: "Rate exceeded (injected)" },
    Throttled: { status: 400, type: "Sender", message: "Publish rate exceeded (injected)" },
    NotFound: { status: 404, type: "Sender", message: "Topic does not exist (injected)" },
    InvalidParameter: { status: 400, type: "Sender", message: "Invalid parameter (injected)" },
    AuthorizationError: { status: 403, type: "Sender", message: "Not authorized (injected)" },
};

/** The named faults that are an error answer, as opposed to a dropped or held connection. */
export type AnsweredFaultKind = Exclude<CallFaultKind, "Reset" | "AcceptThenReset" | "AcceptThenTimeout">;

/** The entry rules' actions when a rule names none: entry rules were PublishBatch's alone before. */
const DEFAULT_ENTRY_ACTIONS: readonly string[] = ["PublishBatch"];

/** The call rules' actions when a rule names none. */
const DEFAULT_CALL_ACTIONS: readonly string[] = ["Publish", "PublishBatch"];

/** The outcome a call failed by `rule` is logged with: the named kind, or an `Error` rule's code. */
export function faultOutcome(rule: CallFaultRule): string {
    return rule.kind === "Error" ? rule.code : rule.kind;
}

/** The error answer of a whole-call fault that answers (a named error kind, or an `Error` rule). */
export function injectedError(rule: CallFaultRule): ApiError {
    if (rule.kind === "Error") {
        const message = rule.message ?? `${rule.code} (injected)`;
        return new ApiError(rule.code, rule.status, message, rule.senderFault ?? rule.status < 500);
    }
    const fault = CALL_FAULTS[rule.kind as AnsweredFaultKind] as CallFaultDefinition;
    return new ApiError(rule.kind, fault.status, fault.message, fault.type === "Sender");
}

/** The plan in force, and the rule counters that `times` reads. */
export interface FaultInjector {
    /** The plan in force. */
    plan(): FaultPlan;
    /** Put `plan` in force; every rule's count restarts (the RNG goes on). */
    replace(plan: FaultPlan): void;
    /** The call rule that fires on this call, if any (counted). */
    callRule(call: CallInfo): CallFaultRule | undefined;
    /** The entry rule that fires on this entry of a batch call (its `actions` name the call's), if any (counted). */
    entryRule(entry: EntryInfo, call: CallInfo): EntryFaultRule | undefined;
}

/** A fault injector with `initial` in force, its rates drawn from an RNG seeded with `seed`. */
export function createFaultInjector(seed: number, initial: FaultPlan): FaultInjector {
    const random = seededRandom(seed);
    let plan = initial;
    let fired = new Map<object, number>();
    function fires(rule: { rate?: number; times?: number }): boolean {
        const count = fired.get(rule) ?? 0;
        if (rule.times !== undefined && count >= rule.times) return false;
        if (rule.rate !== undefined && rule.rate < 1 && random() >= rule.rate) return false;
        fired.set(rule, count + 1);
        return true;
    }
    return {
        plan: () => plan,
        replace(next: FaultPlan): void {
            plan = next;
            fired = new Map();
        },
        callRule: (call) =>
            (plan.calls ?? []).find(
                (r) =>
                    (r.actions ?? DEFAULT_CALL_ACTIONS).includes(call.action) &&
                    (r.when === undefined || r.when(call)) &&
                    fires(r),
            ),
        entryRule: (entry, call) =>
            (plan.entries ?? []).find(
                (r) =>
                    (r.actions ?? DEFAULT_ENTRY_ACTIONS).includes(call.action) &&
                    (r.when === undefined || r.when(entry, call)) &&
                    fires(r),
            ),
    };
}
