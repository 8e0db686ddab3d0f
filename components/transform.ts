/**
 * The `transform` escape hatch: for each child, a caller's partial args deep-merged over the args the component
 * computed, or a callback that changes them (as SST's `transform`). Every child of the component is declared
 * through {@link transformed}, so every child has a key (its key in `CHILD_SUFFIX`, `components/naming.ts`); a replica
 * region's children take the same keys. The one exception is each replica region's provider (`replicaRegions`),
 * which has no key.
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import { OutboxError } from "../runtime/errors";
import { OUTBOX_TABLE_TAG } from "../runtime/schema";
import type { OutboxTransforms } from "./args";
import { CHILD_SUFFIX, type OutboxChild, childName } from "./naming";

/**
 * A callback transform: it gets the args the component computed for a child (after `tags` and the other args are
 * applied), the child's resource options and its Pulumi name. It may change `args` and `opts` in place, or return
 * new args, which then replace the computed ones; it returns nothing else. The outbox's required tag is put back
 * on the table after it runs. Callbacks are for TypeScript and JavaScript only: a function cannot cross languages,
 * so YAML and Python use the object form. In TypeScript, wrap it with {@link transformCallback}.
 */
export type OutboxTransformCallback<A> = (args: A, opts: pulumi.CustomResourceOptions, name: string) => A | void;

/**
 * Lets a typed callback stand where a key of `transform` is typed by its object form (the component's args must
 * stay an interface other languages can read, which holds no function type, and some keys' object forms take
 * strings where the AWS args take a union). It returns the callback itself, typed `never` so that any key takes it;
 * at run time the component tells a function from an object. `A` is the AWS args type the callback gets.
 *
 * @example
 * ```ts
 * new Outbox("orders", {
 *     transform: { publisherRole: transformCallback<aws.iam.RoleArgs>((args) => { args.permissionsBoundary = boundary.arn; }) },
 * });
 * ```
 * @param callback - The callback, `(args, opts, name) => void` (or returning new args).
 */
export function transformCallback<A>(callback: OutboxTransformCallback<A>): never {
    return callback as never;
}

/** The keys `args.transform` accepts: one per child the component can declare (`CHILD_SUFFIX`'s keys). */
export const TRANSFORM_KEYS = Object.keys(CHILD_SUFFIX) as (keyof OutboxTransforms)[];

// Every child has a key, and every key is a child: a compile-time check that the two lists are the same.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const EVERY_CHILD_HAS_A_KEY: Same<keyof OutboxTransforms, OutboxChild> = true;
void EVERY_CHILD_HAS_A_KEY;

/**
 * Whether `value` is a plain object (an object literal, or one with no prototype): the values the deep merge
 * descends into. An Output, a promise, a resource, an asset or an array is not.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
    if (typeof value !== "object" || value === null) return false;
    const proto: unknown = Object.getPrototypeOf(value);
    return proto === Object.prototype || proto === null;
}

function isDeferred(value: unknown): boolean {
    return pulumi.Output.isInstance(value) || value instanceof Promise;
}

/**
 * `override` deep-merged over `base`:
 * - two plain objects merge key by key, recursively; a key of `base` that `override` does not name is kept, and a
 *   key `override` sets to `undefined` is removed;
 * - any other value of `override` (a string, a number, an array, a resource) replaces `base`'s: arrays are replaced
 *   whole, never concatenated, so that a list can also be shortened;
 * - when either side is an Output or a promise (the component's `tags` are one), the merge happens once both are
 *   known, by the same rules, and the result is an Output (secret if either side is).
 * Neither argument is changed.
 *
 * @param base - The component's value.
 * @param override - The caller's value; `undefined` keeps `base`.
 */
export function deepMerge(base: unknown, override: unknown): unknown {
    if (override === undefined) return base;
    if (isPlainObject(base) && isPlainObject(override)) {
        const merged: Record<string, unknown> = { ...base };
        for (const [key, value] of Object.entries(override)) {
            if (value === undefined) delete merged[key];
            // Defined, not assigned: a key named __proto__ stays a key and never becomes the prototype.
            else
                Object.defineProperty(merged, key, {
                    value: deepMerge(Object.hasOwn(base, key) ? base[key] : undefined, value),
                    enumerable: true,
                    writable: true,
                    configurable: true,
                });
        }
        return merged;
    }
    const mergeable = (v: unknown) => isPlainObject(v) || isDeferred(v);
    if ((isDeferred(base) || isDeferred(override)) && mergeable(base) && mergeable(override)) {
        return pulumi
            .all([base, override] as [unknown, unknown])
            .apply(([b, o]) => (isPlainObject(b) && isPlainObject(o) ? deepMerge(b, o) : o));
    }
    return override;
}

/** The caller's value of one `transform` key, as the component receives it: an object, a callback or nothing. */
type TransformValue = object | ((...a: never[]) => unknown) | undefined;

/**
 * What the component must keep on a child whatever its transform says, applied after it: the table keeps the
 * outbox tag the policy pack recognises it by (with its value), merged into the tags the transform left.
 */
const REQUIRED_AFTER_TRANSFORM: Partial<
    Record<OutboxChild, (args: Record<string, unknown>) => Record<string, unknown>>
> = {
    table: (args) => ({
        ...args,
        tags: pulumi
            .output(args.tags as pulumi.Input<Record<string, pulumi.Input<string>>> | undefined)
            .apply((tags) => ({ ...(tags ?? {}), [OUTBOX_TABLE_TAG.key]: OUTBOX_TABLE_TAG.value })),
    }),
};

/** `value` with its plain objects and arrays copied, recursively; every other value (an Output, a resource) shared. */
function copyPlain(value: unknown): unknown {
    if (Array.isArray(value)) return value.map(copyPlain);
    if (!isPlainObject(value)) return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copyPlain(v)]));
}

function describe(value: unknown): string {
    return value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
}

/**
 * The Pulumi name, args and resource options of the child `child` of the outbox named `o.name`, with its
 * `transform` key applied, ready to spread into the resource's constructor:
 * `new aws.sqs.Queue(...transformed(o, "queue", args, { parent }))`.
 * An object is deep-merged over `args` ({@link deepMerge}); a callback is called with a copy of `args`, `opts` and
 * the name, and its changes (or the args it returns) are kept. Then the child's required settings are put back
 * (the table's outbox tag).
 *
 * @param o - The outbox's name and its `transform`.
 * @param child - The child's key.
 * @param args - The args the component computed.
 * @param opts - The resource options the component computed.
 * @throws OutboxError `INVALID_CONFIG` when the key holds neither an object nor a function (a JavaScript caller's
 *   mistake the validator reports first), or when a callback returns something that is not an args object.
 */
export function transformed<A extends object, O extends pulumi.CustomResourceOptions>(
    o: { readonly name: string; readonly t: OutboxTransforms },
    child: OutboxChild,
    args: A,
    opts: O,
): [string, A, O] {
    const name = childName(o.name, child);
    const value = (o.t as Record<OutboxChild, TransformValue>)[child];
    let result: unknown = args;
    let options: O = opts;
    if (typeof value === "function") {
        // A copy down to the Outputs and resources: the two functions share their environment object, and a
        // callback changing one function's must not change the other's.
        const copy = copyPlain(args) as A;
        options = { ...opts };
        const returned: unknown = (value as OutboxTransformCallback<A>)(copy, options, name);
        if (returned !== undefined && !isPlainObject(returned)) {
            throw new OutboxError(
                "INVALID_CONFIG",
                `transform.${child} returned ${describe(returned)} (${String(returned)}); allowed: nothing (change args in place) or the args object of ${name}; fix: return nothing, or the args`,
                { context: { child, name } },
            );
        }
        result = returned ?? copy;
    } else if (isPlainObject(value)) {
        result = deepMerge(args, value);
    } else if (value !== undefined) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `transform.${child} is ${describe(value)}; allowed: an object of ${name}'s args (deep-merged) or a function (args, opts, name) => void; fix: pass one of those, or remove the key`,
            { context: { child, name } },
        );
    }
    const required = REQUIRED_AFTER_TRANSFORM[child];
    const final = required === undefined ? result : required(result as Record<string, unknown>);
    return [name, final as A, options];
}
