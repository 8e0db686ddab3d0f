/**
 * Which resources the outbox policies judge: the ones that belong to an outbox, told by the marks the component
 * puts on them, never guessed from their shape. A stack that turns the pack on keeps every other table, mapping
 * and role out of it.
 *
 * A resource belongs to an outbox when:
 * - it was declared inside an `Outbox`: its parent's type, or an ancestor's, is {@link OUTBOX_TYPE}. The engine
 *   spells the types of a resource's ancestors in its URN (`<ancestor types>$<type>`), which both kinds of policy
 *   get, so the URN alone tells;
 * - it is a table carrying the component's tag {@link OUTBOX_TABLE_TAG}: a table provisioned by hand claims to
 *   be an outbox table with it;
 * - in a stack policy, it is tied to one of those: a mapping that reads an outbox table's stream, a role that a
 *   function inside an Outbox runs as.
 *
 * During a preview the analyzer hands over values it does not know yet as proxies that throw on access. Values
 * read to decide membership or to correlate resources go through {@link known}, so that an unknown value in
 * another resource never stops a check.
 *
 * @packageDocumentation
 */
import type { EnforcementLevel, StackValidationPolicy } from "@pulumi/policy";
import { OUTBOX_TABLE_TAG } from "../runtime/schema";
import { OUTBOX_TYPE } from "../components/naming";

/** A resource's properties as a policy sees them: plain values, keyed by the provider's property names. */
export type ResourceProps = Record<string, any>;

/** The type tokens the policies look at. */
export const RESOURCE_TYPES = {
    table: "aws:dynamodb/table:Table",
    mapping: "aws:lambda/eventSourceMapping:EventSourceMapping",
    queue: "aws:sqs/queue:Queue",
    topic: "aws:sns/topic:Topic",
    eventBus: "aws:cloudwatch/eventBus:EventBus",
    fn: "aws:lambda/function:Function",
    role: "aws:iam/role:Role",
    rolePolicy: "aws:iam/rolePolicy:RolePolicy",
    policy: "aws:iam/policy:Policy",
    rolePolicyAttachment: "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
    policyAttachment: "aws:iam/policyAttachment:PolicyAttachment",
    metricAlarm: "aws:cloudwatch/metricAlarm:MetricAlarm",
} as const;

/** One resource as a stack policy sees it (a structural subset of `@pulumi/policy`'s `PolicyResource`). */
export interface StackResourceView {
    /** The type token. */
    readonly type: string;
    /** The logical name. */
    readonly name: string;
    /** The URN. */
    readonly urn: string;
    /** The resource's properties (outputs, for a stack policy). */
    readonly props: ResourceProps;
    /** The resources each input property depends on, by property name. @default undefined */
    readonly propertyDependencies?: Record<string, readonly StackResourceView[]>;
    /** The resource's parent, when it was declared with one. @default undefined */
    readonly parent?: StackResourceView;
}

/** Whether `e` is the analyzer's error for reading a value that is unknown during a preview. */
function isUnknownValueError(e: unknown): boolean {
    // @pulumi/policy keeps the class internal; its name is the one stable handle on it.
    return e instanceof Error && e.constructor.name === "UnknownValueError";
}

/**
 * `read()`, or `undefined` when it reads a value unknown during a preview.
 *
 * @param read - Reads resource properties.
 * @throws whatever `read` throws, except the analyzer's unknown-value error.
 */
export function known<T>(read: () => T): T | undefined {
    try {
        return read();
    } catch (e) {
        if (isUnknownValueError(e)) return undefined;
        throw e;
    }
}

/** The type tokens in a URN, outermost ancestor first: `urn:pulumi:<stack>::<project>::<a>$<b>$<type>::<name>`. */
export function urnTypes(urn: string): string[] {
    const qualified = urn.split("::")[2];
    return qualified === undefined || qualified === "" ? [] : qualified.split("$");
}

/**
 * Whether a resource was declared inside an Outbox: an ancestor's type, spelled in its URN before its own, is the
 * Outbox's.
 *
 * @param urn - The resource's URN (a resource policy's `args.urn`, a stack policy's `resource.urn`).
 */
export function declaredInsideOutbox(urn: string): boolean {
    return urnTypes(urn).slice(0, -1).includes(OUTBOX_TYPE);
}

/** Whether a stack resource was declared inside an Outbox ({@link declaredInsideOutbox} of its URN). */
export function insideOutbox(r: StackResourceView): boolean {
    return declaredInsideOutbox(r.urn);
}

/** Whether table props carry the component's outbox tag (an unknown tag value counts as absent). */
export function hasOutboxTableTag(props: ResourceProps): boolean {
    return known(() => props.tags?.[OUTBOX_TABLE_TAG.key]) === OUTBOX_TABLE_TAG.value;
}

/**
 * Whether a table is an outbox table: declared inside an Outbox, or tagged with {@link OUTBOX_TABLE_TAG}.
 *
 * @param urn - The table's URN.
 * @param props - The table's properties.
 */
export function isOutboxTable(urn: string, props: ResourceProps): boolean {
    return declaredInsideOutbox(urn) || hasOutboxTableTag(props);
}

/** The non-empty strings the readers return; a reader of an unknown or absent value adds nothing. */
function knownStrings(...reads: (() => unknown)[]): string[] {
    return reads.flatMap(
        (read) => known(() => [read()].flat().filter((v): v is string => typeof v === "string" && v !== "")) ?? [],
    );
}

/** The outbox resources of a stack, and what ties other resources to them. */
export interface OutboxScope {
    /** The outbox tables: declared inside an Outbox, or tagged. */
    readonly tables: readonly StackResourceView[];
    /** The mappings declared inside an Outbox. */
    readonly ownMappings: readonly StackResourceView[];
    /** The mappings declared elsewhere that read an outbox table's stream. */
    readonly externalMappings: readonly StackResourceView[];
    /** The roles declared inside an Outbox, and the roles a function declared inside an Outbox runs as. */
    readonly roles: readonly StackResourceView[];
    /** The outbox table whose stream `mapping` reads, if any. */
    tableOf(mapping: StackResourceView): StackResourceView | undefined;
    /**
     * The outbox role `r`'s property `property` refers to: through the engine's property dependencies, or by the
     * role's name or ARN.
     */
    roleReferencedBy(r: StackResourceView, property: string): StackResourceView | undefined;
}

/** Whether `r`'s `property` refers to `target`: a property dependency on it, or one of its known identifiers. */
function refersTo(
    r: StackResourceView,
    property: string,
    target: StackResourceView,
    identifiers: readonly string[],
): boolean {
    if ((r.propertyDependencies?.[property] ?? []).some((d) => d === target || d.urn === target.urn)) return true;
    const values = knownStrings(() => r.props[property]);
    return values.some((v) => identifiers.includes(v));
}

/**
 * The outbox resources among a stack's resources.
 *
 * @param resources - The stack's resources, as a stack policy gets them.
 */
export function outboxScope(resources: readonly StackResourceView[]): OutboxScope {
    const of = (type: string) => resources.filter((r) => r.type === type);
    const tables = of(RESOURCE_TYPES.table).filter((t) => insideOutbox(t) || hasOutboxTableTag(t.props));
    const streams = tables
        .map((t) => ({ table: t, arn: known(() => t.props.streamArn) }))
        .filter((s): s is { table: StackResourceView; arn: string } => typeof s.arn === "string");
    const tableOf = (mapping: StackResourceView): StackResourceView | undefined => {
        const source = known(() => mapping.props.eventSourceArn);
        return streams.find((s) => s.arn === source)?.table;
    };
    const mappings = of(RESOURCE_TYPES.mapping);
    const ownMappings = mappings.filter(insideOutbox);
    const externalMappings = mappings.filter((m) => !insideOutbox(m) && tableOf(m) !== undefined);

    const allRoles = of(RESOURCE_TYPES.role).map((role) => ({
        role,
        identifiers: knownStrings(
            () => role.props.name,
            () => role.props.arn,
        ),
    }));
    const outboxFunctions = of(RESOURCE_TYPES.fn).filter(insideOutbox);
    const roles = allRoles.filter(
        ({ role, identifiers }) =>
            insideOutbox(role) || outboxFunctions.some((f) => refersTo(f, "role", role, identifiers)),
    );
    const roleReferencedBy = (r: StackResourceView, property: string): StackResourceView | undefined =>
        roles.find(({ role, identifiers }) => refersTo(r, property, role, identifiers))?.role;

    return { tables, ownMappings, externalMappings, roles: roles.map((r) => r.role), tableOf, roleReferencedBy };
}

/** What a stack policy's check finds: the resource's URN and what is wrong with it. */
export interface StackViolation {
    /** The resource's URN. */
    readonly urn: string;
    /** What is wrong, and the fix. */
    readonly message: string;
}

/**
 * A stack policy that reports, on its resource, every violation `violations` finds among the stack's resources.
 *
 * @param name - The policy's name.
 * @param description - What it requires.
 * @param enforcementLevel - Its level when the pack's config sets none.
 * @param violations - The check: the stack's resources in, the violations out.
 */
export function stackPolicy(
    name: string,
    description: string,
    enforcementLevel: EnforcementLevel,
    violations: (resources: readonly StackResourceView[]) => readonly StackViolation[],
): StackValidationPolicy {
    return {
        name,
        description,
        enforcementLevel,
        validateStack: (args, reportViolation) => {
            for (const v of violations(args.resources)) reportViolation(v.message, v.urn);
        },
    };
}
