/**
 * Typed events, shared by the writer and the inbox: an event map (type → payload type), validators through the
 * Standard Schema interface (`~standard`, which zod, valibot and arktype implement; its types are written out here,
 * so no schema library is a dependency), and the schema version an event carries.
 *
 * A validator judges a payload; it never replaces it. The writer writes the payload it was given, and the inbox
 * hands `consume` the payload that travelled, so the JSON text is the same at both ends (a schema's transforms and
 * defaults are not applied).
 *
 * @packageDocumentation
 */
import { OutboxError } from "../errors";

/** A segment of a Standard Schema issue's path, when it is an object rather than a bare key. */
export interface StandardSchemaV1PathSegment {
    /** The key. */
    readonly key: PropertyKey;
}

/** One problem a Standard Schema validator found. */
export interface StandardSchemaV1Issue {
    /** What is wrong, in the schema library's words. */
    readonly message: string;
    /** Where, from the payload's root. @default undefined (the payload itself) */
    readonly path?: ReadonlyArray<PropertyKey | StandardSchemaV1PathSegment> | undefined;
}

/** What a Standard Schema validator returns: the value, or the issues. */
export type StandardSchemaV1Result<Output> =
    { readonly value: Output; readonly issues?: undefined } | { readonly issues: ReadonlyArray<StandardSchemaV1Issue> };

/** The `~standard` property of a Standard Schema (version 1). */
export interface StandardSchemaV1Props<Input = unknown, Output = Input> {
    /** The interface's version: 1. */
    readonly version: 1;
    /** The library that made the schema, e.g. `"zod"`. */
    readonly vendor: string;
    /** Validate a value; may return a Promise (an asynchronous schema). */
    readonly validate: (value: unknown) => StandardSchemaV1Result<Output> | Promise<StandardSchemaV1Result<Output>>;
    /** The schema's input and output types, for inference only. @default undefined */
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
}

/**
 * A Standard Schema (https://standardschema.dev), version 1: any object with a `~standard` property of this shape,
 * such as a zod, valibot or arktype schema.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
    /** The interface. */
    readonly "~standard": StandardSchemaV1Props<Input, Output>;
}

/**
 * An event map: each event type's name, mapped to its payload's type, e.g.
 * `{ OrderPlaced: { orderId: string; total: number }; OrderCancelled: { orderId: string } }`. Any object type (an
 * interface too, which has no index signature): its string keys are the types.
 */
export type EventMap = object;

/** The map of an untyped writer or inbox: any type, any payload. The default, so untyped code compiles as it did. */
export type UntypedEvents = Record<string, unknown>;

/** Whether `M` is the untyped map (its keys are every string). */
export type IsUntyped<M> = string extends keyof M ? true : false;

/** The event types of a map, as strings. */
export type EventType<M> = keyof M & string;

/**
 * One event of a map, as a discriminated union on `type`: `{ type: "OrderPlaced"; payload: … } | …`. `Base` is the
 * rest of the object each member carries.
 */
export type TypedEvent<M, Base> = {
    [K in EventType<M>]: Omit<Base, "type" | "payload"> & { readonly type: K; readonly payload: M[K] };
}[EventType<M>];

/**
 * A validator per event type: a Standard Schema whose output is the type's payload. A type with no entry is not
 * validated, unless `unvalidatedTypes` is `"refuse"`.
 */
export type EventValidators<M> = { readonly [K in EventType<M>]?: StandardSchemaV1<unknown, M[K]> };

/** A schema version per event type: the version each type's events carry when the message gives none. */
export type EventSchemaVersions<M> = { readonly [K in EventType<M>]?: string };

/**
 * What happens to an event whose type has no validator, when validators are given: `"accept"` lets it through
 * unvalidated, as without validators; `"refuse"` refuses it (the writer with `INVALID_PAYLOAD`, the inbox as
 * poison).
 */
export type UnvalidatedTypes = "accept" | "refuse";

/** The longest schema version, in characters. */
export const MAX_SCHEMA_VERSION_LENGTH = 64;

/** A schema version's alphabet: letters, digits, `.`, `_`, `-` and `+` (e.g. `2`, `v3`, `1.4.0`, `2026-01-15`). */
const SCHEMA_VERSION = /^[A-Za-z0-9._+-]+$/;

/**
 * Why a value cannot be a schema version, or `undefined` when it can: 1 to {@link MAX_SCHEMA_VERSION_LENGTH}
 * letters, digits, `.`, `_`, `-` or `+`. It travels as a message attribute, a header and an event field, and an
 * event pattern or a filter policy matches it: an alphabet that every one of them carries as it is.
 *
 * @param value - The candidate version.
 */
export function schemaVersionProblem(value: unknown): string | undefined {
    if (typeof value !== "string") return "must be a string";
    if (value.length === 0 || value.length > MAX_SCHEMA_VERSION_LENGTH)
        return `must be 1 to ${MAX_SCHEMA_VERSION_LENGTH} characters (it is ${value.length})`;
    if (!SCHEMA_VERSION.test(value)) return "may hold only letters, digits, '.', '_', '-' and '+'";
    return undefined;
}

/** An issue's path as text: `$` for the payload, `$.items[0].sku` below it. */
export function issuePath(path: StandardSchemaV1Issue["path"]): string {
    let text = "$";
    for (const segment of path ?? []) {
        const key = typeof segment === "object" && segment !== null ? segment.key : segment;
        text += typeof key === "number" ? `[${key}]` : `.${String(key)}`;
    }
    return text;
}

/** The validators, the policy for types without one, and the versions: checked once, by whoever takes them. */
export interface TypedEventRules {
    readonly validators: Readonly<Record<string, StandardSchemaV1>> | undefined;
    readonly unvalidatedTypes: UnvalidatedTypes;
    readonly schemaVersions: Readonly<Record<string, string>>;
}

function invalidConfig(owner: string, message: string): OutboxError {
    return new OutboxError("INVALID_CONFIG", `${owner}: ${message}`);
}

/**
 * Check the typed-event options of a writer or an inbox handler.
 *
 * @param owner - Who takes them, for the errors (`OutboxWriter`, `createInboxHandler`).
 * @param options - `validators`, `unvalidatedTypes` and `schemaVersions`, as given.
 * @throws OutboxError `INVALID_CONFIG` for a validator that is not a Standard Schema, a policy other than
 *   `"accept"` or `"refuse"`, or a version {@link schemaVersionProblem} refuses.
 */
export function typedEventRules(
    owner: string,
    options: { validators?: unknown; unvalidatedTypes?: unknown; schemaVersions?: unknown },
): TypedEventRules {
    const { validators, schemaVersions } = options;
    const unvalidatedTypes = options.unvalidatedTypes ?? "accept";
    if (unvalidatedTypes !== "accept" && unvalidatedTypes !== "refuse")
        throw invalidConfig(
            owner,
            `unvalidatedTypes is ${JSON.stringify(unvalidatedTypes)}; it must be "accept" (a type without a validator passes unvalidated) or "refuse"; omit it for "accept"`,
        );
    if (validators !== undefined) {
        if (validators === null || typeof validators !== "object")
            throw invalidConfig(
                owner,
                `validators must be an object of Standard Schemas by event type (e.g. { OrderPlaced: z.object(…) }), got ${String(validators)}`,
            );
        for (const [type, schema] of Object.entries(validators)) {
            const standard = (schema as { "~standard"?: { validate?: unknown; version?: unknown } } | null)?.[
                "~standard"
            ];
            if (typeof standard?.validate !== "function" || standard.version !== 1)
                throw invalidConfig(
                    owner,
                    `validators[${JSON.stringify(type)}] is not a Standard Schema (version 1, with a "~standard".validate function); pass a zod, valibot or arktype schema, or any object implementing https://standardschema.dev`,
                );
        }
    } else if (unvalidatedTypes === "refuse") {
        throw invalidConfig(
            owner,
            'unvalidatedTypes is "refuse" without validators, which would refuse every event; give validators, or omit unvalidatedTypes',
        );
    }
    const versions: Record<string, string> = {};
    if (schemaVersions !== undefined) {
        if (schemaVersions === null || typeof schemaVersions !== "object")
            throw invalidConfig(
                owner,
                `schemaVersions must be an object of versions by event type (e.g. { OrderPlaced: "2" }), got ${String(schemaVersions)}`,
            );
        for (const [type, version] of Object.entries(schemaVersions)) {
            const problem = schemaVersionProblem(version);
            if (problem !== undefined)
                throw invalidConfig(
                    owner,
                    `schemaVersions[${JSON.stringify(type)}] is ${JSON.stringify(version)}; a schema version ${problem}`,
                );
            versions[type] = version as string;
        }
    }
    return {
        validators: validators as Readonly<Record<string, StandardSchemaV1>> | undefined,
        unvalidatedTypes,
        schemaVersions: versions,
    };
}

/** Why a payload was refused: the issues, or that its type has no validator under `unvalidatedTypes: "refuse"`. */
export interface PayloadRefusal {
    /** The first issue's path (`$` for the payload itself), or `undefined` for a type without a validator. */
    readonly path?: string;
    /** The refusal in words: the issues' paths and messages, or the missing validator. */
    readonly text: string;
}

/**
 * Validate a payload against its type's validator (awaited when the schema is asynchronous).
 *
 * @param rules - From {@link typedEventRules}.
 * @param type - The event type.
 * @param payload - The payload, as a JSON value.
 * @returns `undefined` when the payload passes (or its type has no validator and such types are accepted), else
 *   why it was refused.
 */
export async function payloadRefusal(
    rules: TypedEventRules,
    type: string,
    payload: unknown,
): Promise<PayloadRefusal | undefined> {
    if (rules.validators === undefined) return undefined;
    const schema = Object.prototype.hasOwnProperty.call(rules.validators, type) ? rules.validators[type] : undefined;
    if (schema === undefined) {
        if (rules.unvalidatedTypes === "accept") return undefined;
        const known = Object.keys(rules.validators);
        return {
            text: `type ${JSON.stringify(type)} has no validator and unvalidatedTypes is "refuse" (validated types: ${known.map((k) => JSON.stringify(k)).join(", ") || "none"}); add a validator for it, or set unvalidatedTypes to "accept"`,
        };
    }
    const result = await schema["~standard"].validate(payload);
    if (result.issues === undefined) return undefined;
    const issues = result.issues.map((issue) => `${issuePath(issue.path)}: ${issue.message}`);
    const shown = issues.slice(0, 5).join("; ") + (issues.length > 5 ? `; and ${issues.length - 5} more` : "");
    return {
        path: issuePath(result.issues[0]?.path),
        text: `the payload of type ${JSON.stringify(type)} fails its ${schema["~standard"].vendor} schema at ${shown}`,
    };
}
