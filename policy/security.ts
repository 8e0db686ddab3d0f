/**
 * The outbox's security policies for the CrossGuard pack: least privilege for the outbox's IAM (what an Outbox
 * declares, and grants declared elsewhere on the roles its functions run as), and encryption at rest for the
 * outbox's DLQ and its destination (topic, queue or event bus). Like `outbox-policies.ts`, this module only exports policies; `outboxPolicies` includes them.
 * IAM that belongs to no outbox is left alone (`scope.ts`).
 *
 * Values still unknown during a preview (a policy document built from Outputs) arrive absent or unparseable
 * and are skipped, never reported.
 *
 * @packageDocumentation
 */
import * as aws from "../components/aws";
import {
    EnforcementLevel,
    ResourceValidationPolicy,
    StackValidationPolicy,
    validateResourceOfType,
} from "@pulumi/policy";
import { destinationVariable } from "../runtime/config";
import { DESTINATION_KINDS, type DestinationKind } from "../runtime/destination/kind";
import { LIST_STREAMS_ACTION } from "../components/iam";
import {
    RESOURCE_TYPES,
    ResourceProps as Props,
    StackResourceView,
    declaredInsideOutbox,
    insideOutbox,
    known,
    outboxScope,
    stackPolicy,
} from "./scope";

/**
 * Actions AWS authorizes only on resource `*` (they take no resource ARN). A statement may use `*` as its
 * resource only when every action in it is one of these.
 */
export const WILDCARD_RESOURCE_ACTIONS: readonly string[] = [
    LIST_STREAMS_ACTION,
    "xray:PutTraceSegments",
    "xray:PutTelemetryRecords",
    "cloudwatch:PutMetricData",
];

/**
 * Managed policies too broad for an outbox function: administrator access and any `*FullAccess`
 * (`AWSLambda_FullAccess` has an underscore, `CloudWatchFullAccessV2` a version).
 */
const BROAD_MANAGED_POLICY = /:policy\/(AdministratorAccess|PowerUserAccess|[A-Za-z0-9_]*FullAccess(V\d+)?)$/;

function list(value: unknown): unknown[] {
    return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/**
 * The least-privilege violations of one IAM policy document: an `Allow` of `*` or `service:*`, an `Allow` with
 * `NotAction` or `NotResource`, and a `*` resource on an action that takes ARNs.
 *
 * @param subject - Names the document in messages, e.g. `role "orders-publisher-role" inline policy 0`.
 * @param document - The document, as JSON text or an object. Unparseable text (an unknown during preview) gives no violation.
 */
export function leastPrivilegeViolations(subject: string, document: unknown): string[] {
    let doc: Props | undefined;
    try {
        doc = typeof document === "string" ? (JSON.parse(document) as Props) : (document as Props | undefined);
    } catch {
        return [];
    }
    if (doc === null || typeof doc !== "object") return [];
    const out: string[] = [];
    list(doc.Statement).forEach((raw, i) => {
        const s = raw as Props;
        if (s?.Effect !== "Allow") return;
        const where = `${subject} statement ${s.Sid !== undefined ? `"${String(s.Sid)}"` : i}`;
        if (s.NotAction !== undefined || s.NotResource !== undefined) {
            out.push(
                `${where}: Allow with ${s.NotAction !== undefined ? "NotAction" : "NotResource"} grants everything not listed; list the actions and resources instead`,
            );
        }
        const actions = list(s.Action).map(String);
        const broad = actions.filter((a) => a === "*" || /^[a-z0-9-]+:\*$/i.test(a));
        if (broad.length > 0)
            out.push(
                `${where}: action ${broad.map((a) => JSON.stringify(a)).join(", ")} grants every action of ${broad.includes("*") ? "every service" : "the service"}; name the actions the function calls`,
            );
        const resources = list(s.Resource).map(String);
        const needsArn = actions.filter((a) => !WILDCARD_RESOURCE_ACTIONS.includes(a));
        if (resources.includes("*") && needsArn.length > 0) {
            out.push(
                `${where}: resource "*" on ${needsArn.map((a) => JSON.stringify(a)).join(", ")}; scope them to the outbox's ARNs (only ${WILDCARD_RESOURCE_ACTIONS.join(", ")} require "*")`,
            );
        }
    });
    return out;
}

/** The SSE state of an SQS queue's props: `kms`, `sqs` (SSE-SQS, on by default for new queues) or `none`. */
function queueEncryption(props: Props): "kms" | "sqs" | "none" {
    if (typeof props.kmsMasterKeyId === "string" && props.kmsMasterKeyId !== "") return "kms";
    return props.sqsManagedSseEnabled === false ? "none" : "sqs";
}

/**
 * How a policy finds an outbox's destination and reads its key: the resource type declared in the stack, the
 * property that names its customer managed key (`kmsKeyIdentifier` on an event bus, in @pulumi/aws 7.x), and what
 * the messages call it.
 */
export const DESTINATION_KEY_PROPERTIES = {
    sns: { type: RESOURCE_TYPES.topic, property: "kmsMasterKeyId", noun: "topic" },
    sqs: { type: RESOURCE_TYPES.queue, property: "kmsMasterKeyId", noun: "destination queue" },
    eventbridge: { type: RESOURCE_TYPES.eventBus, property: "kmsKeyIdentifier", noun: "event bus" },
} as const satisfies Record<DestinationKind, { type: string; property: string; noun: string }>;

/** The destination a function publishes to, declared in the stack: found by the ARN its environment names. */
function destinationOf(
    resources: readonly StackResourceView[],
    fn: StackResourceView,
): { kind: DestinationKind; resource: StackResourceView } | undefined {
    for (const kind of Object.values(DESTINATION_KINDS)) {
        const arn: unknown = known(() => fn.props.environment?.variables?.[destinationVariable(kind)]);
        if (typeof arn !== "string") continue;
        const resource = resources.find(
            (r) => r.type === DESTINATION_KEY_PROPERTIES[kind].type && known(() => r.props.arn) === arn,
        );
        if (resource !== undefined) return { kind, resource };
    }
    return undefined;
}

/** The DLQ's violation: not encrypted at all, or SSE-SQS while the table has a customer managed key. */
function dlqViolation(queue: StackResourceView, customerKey: unknown, tableText: string): string | undefined {
    const sse = queueEncryption(queue.props);
    if (sse === "none")
        return `outbox DLQ "${queue.name}" is not encrypted at rest (sqsManagedSseEnabled: false, no kmsMasterKeyId); it holds whole payloads: remove sqsManagedSseEnabled: false or set kmsMasterKeyId`;
    if (typeof customerKey === "string" && sse !== "kms")
        return `outbox DLQ "${queue.name}" uses SSE-SQS while ${tableText} is encrypted with the customer managed key ${customerKey}; set kmsMasterKeyId to that key (the Outbox component does when kmsKeyArn is given)`;
    return undefined;
}

/** The destination's violation: no KMS key while the table has a customer managed key. */
function destinationViolation(
    kind: DestinationKind,
    destination: StackResourceView,
    customerKey: string,
    tableText: string,
): string | undefined {
    const { property, noun } = DESTINATION_KEY_PROPERTIES[kind];
    const key: unknown = known(() => destination.props[property]);
    if (typeof key === "string" && key !== "") return undefined;
    const fix =
        kind === DESTINATION_KINDS.sns
            ? "set kmsMasterKeyId to that key (the Outbox component does when kmsKeyArn is given)"
            : `set ${property} to a customer managed key, and give the Outbox that key as destinationKmsKeyArn unless it is kmsKeyArn`;
    return `outbox ${noun} "${destination.name}" has no ${property} while ${tableText} is encrypted with the customer managed key ${customerKey}; ${fix}`;
}

/**
 * Encryption-at-rest violations of each outbox in the stack, found from its stream mappings (the Outbox's own
 * and those on an outbox table's stream): the DLQ (the mapping's on-failure destination) must be encrypted
 * (SSE-SQS or KMS); and when the outbox table uses a customer managed key, the DLQ and the publisher's destination
 * must use a KMS key too, or payloads the table keeps under that key sit in the DLQ, or pass through the
 * destination, without it. The destination is the topic, queue or event bus declared in the same stack whose ARN
 * the publisher's environment names (`OUTBOX_TOPIC_ARN`, `OUTBOX_QUEUE_ARN` or `OUTBOX_EVENT_BUS_ARN`); one
 * declared elsewhere is not judged.
 *
 * @param resources - The stack's resources with their outputs (`streamArn`, `arn`, `name`).
 */
export function encryptionAtRestViolations(
    resources: readonly StackResourceView[],
): { urn: string; message: string }[] {
    const out: { urn: string; message: string }[] = [];
    const of = (type: string) => resources.filter((r) => r.type === type);
    const scope = outboxScope(resources);
    for (const mapping of [...scope.ownMappings, ...scope.externalMappings]) {
        const table = scope.tableOf(mapping);
        const customerKey: unknown =
            table?.props.serverSideEncryption?.enabled === true
                ? table.props.serverSideEncryption.kmsKeyArn
                : undefined;
        const tableText = table === undefined ? "the outbox table" : `outbox table "${table.name}"`;
        const dlqArn: unknown = known(() => mapping.props.destinationConfig?.onFailure?.destinationArn);
        const queue = of(RESOURCE_TYPES.queue).find((q) => dlqArn !== undefined && known(() => q.props.arn) === dlqArn);
        const dlqMessage = queue === undefined ? undefined : dlqViolation(queue, customerKey, tableText);
        if (queue !== undefined && dlqMessage !== undefined) out.push({ urn: queue.urn, message: dlqMessage });
        if (typeof customerKey !== "string") continue;
        const functionName: unknown = known(() => mapping.props.functionName);
        const fn = of(RESOURCE_TYPES.fn).find(
            (f) =>
                functionName !== undefined &&
                (known(() => f.props.arn) === functionName || known(() => f.props.name) === functionName),
        );
        const destination = fn === undefined ? undefined : destinationOf(resources, fn);
        if (destination === undefined) continue;
        const message = destinationViolation(destination.kind, destination.resource, customerKey, tableText);
        if (message !== undefined) out.push({ urn: destination.resource.urn, message });
    }
    return out;
}

/** Whether a managed policy ARN is too broad for an outbox function. */
export function isBroadManagedPolicy(policyArn: unknown): boolean {
    return typeof policyArn === "string" && BROAD_MANAGED_POLICY.test(policyArn);
}

/**
 * Least-privilege violations of the grants declared outside an Outbox on an outbox role (a role declared inside
 * an Outbox, or one a function declared inside an Outbox runs as): a role policy attachment or policy attachment
 * of a broad managed policy, or of a customer managed policy whose document is too broad; a role policy whose
 * document is too broad; the inline policies of such a role declared outside the Outbox.
 *
 * @param resources - The stack's resources with their outputs (roles' `name` and `arn`, policies' `arn`).
 */
export function outboxRoleGrantViolations(resources: readonly StackResourceView[]): { urn: string; message: string }[] {
    const scope = outboxScope(resources);
    const of = (type: string) => resources.filter((r) => r.type === type && !insideOutbox(r));
    const out: { urn: string; message: string }[] = [];
    const push = (r: StackResourceView, messages: string[]) =>
        out.push(...messages.map((message) => ({ urn: r.urn, message })));
    const customerPolicy = (attachment: StackResourceView): StackResourceView | undefined => {
        const arn: unknown = known(() => attachment.props.policyArn);
        return resources.find(
            (p) =>
                p.type === RESOURCE_TYPES.policy &&
                ((attachment.propertyDependencies?.policyArn ?? []).some((d) => d.urn === p.urn) ||
                    (arn !== undefined && known(() => p.props.arn) === arn)),
        );
    };
    const attachments = [
        ...of(RESOURCE_TYPES.rolePolicyAttachment).map((a) => ({
            a,
            kind: "role policy attachment",
            role: scope.roleReferencedBy(a, "role"),
        })),
        ...of(RESOURCE_TYPES.policyAttachment).map((a) => ({
            a,
            kind: "policy attachment",
            role: scope.roleReferencedBy(a, "roles"),
        })),
    ];
    for (const { a, kind, role } of attachments) {
        if (role === undefined) continue;
        const policyArn: unknown = known(() => a.props.policyArn);
        if (isBroadManagedPolicy(policyArn)) {
            push(a, [
                `${kind} "${a.name}" attaches ${String(policyArn)} to outbox role "${role.name}", far beyond what an outbox function needs; grant the actions in an inline policy scoped to the outbox's ARNs`,
            ]);
            continue;
        }
        const policy = customerPolicy(a);
        if (policy !== undefined)
            push(
                a,
                leastPrivilegeViolations(
                    `policy "${policy.name}" attached to outbox role "${role.name}" by ${kind} "${a.name}"`,
                    known(() => policy.props.policy),
                ),
            );
    }
    for (const rp of of(RESOURCE_TYPES.rolePolicy)) {
        const role = scope.roleReferencedBy(rp, "role");
        if (role !== undefined)
            push(
                rp,
                leastPrivilegeViolations(
                    `role policy "${rp.name}" on outbox role "${role.name}"`,
                    known(() => rp.props.policy),
                ),
            );
    }
    for (const role of scope.roles.filter((r) => !insideOutbox(r))) {
        const documents = known(() => list(role.props.inlinePolicies).map((p) => (p as Props)?.policy)) ?? [];
        documents.forEach((d, i) =>
            push(
                role,
                leastPrivilegeViolations(
                    `outbox role "${role.name}" inline policy${documents.length > 1 ? ` ${i}` : ""}`,
                    d,
                ),
            ),
        );
    }
    return out;
}

function validateDocuments(subject: string, documents: unknown[], reportViolation: (message: string) => void): void {
    documents.forEach((d, i) => {
        for (const v of leastPrivilegeViolations(documents.length > 1 ? `${subject} ${i}` : subject, d))
            reportViolation(v);
    });
}

/**
 * The security policies: least privilege in an Outbox (resource policy), least privilege of the grants on its
 * roles declared elsewhere and encryption at rest (stack policies).
 *
 * @param enforcementLevel - Their level when the pack's config sets none.
 */
export function outboxSecurityPolicies(
    enforcementLevel: EnforcementLevel,
): (ResourceValidationPolicy | StackValidationPolicy)[] {
    // Only what an Outbox declares; grants made elsewhere are outbox-least-privilege-attached's.
    const inOutbox = (args: { urn: string }) => declaredInsideOutbox(args.urn);
    return [
        {
            name: "outbox-least-privilege",
            description:
                "No IAM document an Outbox declares allows `*` or `service:*` actions, NotAction or NotResource, or a `*` resource on an action that takes ARNs; no role of an Outbox gets AdministratorAccess, PowerUserAccess or a *FullAccess managed policy.",
            enforcementLevel,
            validateResource: [
                validateResourceOfType(aws.iam.Role, (props, args, reportViolation) => {
                    if (!inOutbox(args)) return;
                    validateDocuments(
                        `role "${args.name}" inline policy`,
                        list(props.inlinePolicies).map((p) => (p as Props)?.policy),
                        reportViolation,
                    );
                }),
                validateResourceOfType(aws.iam.RolePolicy, (props, args, reportViolation) => {
                    if (inOutbox(args))
                        validateDocuments(`role policy "${args.name}"`, [props.policy], reportViolation);
                }),
                validateResourceOfType(aws.iam.Policy, (props, args, reportViolation) => {
                    if (inOutbox(args)) validateDocuments(`policy "${args.name}"`, [props.policy], reportViolation);
                }),
                validateResourceOfType(aws.iam.RolePolicyAttachment, (props, args, reportViolation) => {
                    if (inOutbox(args) && isBroadManagedPolicy(props.policyArn)) {
                        reportViolation(
                            `role policy attachment "${args.name}" attaches ${props.policyArn}, far beyond what an outbox function needs; grant the actions in an inline policy scoped to the outbox's ARNs`,
                        );
                    }
                }),
            ],
        },
        stackPolicy(
            "outbox-least-privilege-attached",
            "A grant declared outside an Outbox on one of its roles (a policy attachment, a role policy, the inline policies of a role its function runs as) meets outbox-least-privilege's rules.",
            enforcementLevel,
            outboxRoleGrantViolations,
        ),
        stackPolicy(
            "outbox-encryption-at-rest",
            "An outbox's DLQ is encrypted at rest; when the outbox table uses a customer managed KMS key, the DLQ and the publisher's destination (its topic, queue or event bus, when declared in the stack) use a KMS key too.",
            enforcementLevel,
            encryptionAtRestViolations,
        ),
    ];
}
