/**
 * The outbox's security policies for the CrossGuard pack: least privilege for every IAM document in the stack,
 * and encryption at rest for the outbox's DLQ and topic. Like `policies.ts`, this module only exports policies;
 * `outboxPolicies` includes them.
 *
 * Values still unknown during a preview (a policy document built from Outputs) arrive absent or unparseable
 * and are skipped, never reported.
 *
 * @packageDocumentation
 */
import * as aws from "@pulumi/aws";
import { ResourceValidationPolicy, StackValidationPolicy, validateResourceOfType } from "@pulumi/policy";
import { ENV } from "../runtime/config";
import { LIST_STREAMS_ACTION } from "./iam";

type Props = Record<string, any>;

/**
 * How to tell an outbox table and an outbox stream mapping from their props: `isOutboxTable` and
 * `isOutboxMapping` of `policies.ts`, passed in so the two modules do not import each other.
 */
export interface OutboxRecognisers {
    /** Whether table props belong to an outbox table. */
    isOutboxTable(props: Props): boolean;
    /** Whether mapping props read an outbox stream. */
    isOutboxMapping(props: Props): boolean;
}

/**
 * Actions AWS authorizes only on resource `*` (they take no resource ARN). A statement may use `*` as its
 * resource only when every action in it is one of these.
 */
export const WILDCARD_RESOURCE_ACTIONS: readonly string[] = [LIST_STREAMS_ACTION, "xray:PutTraceSegments", "xray:PutTelemetryRecords", "cloudwatch:PutMetricData"];

/** Managed policies too broad for an outbox function: administrator access and any `*FullAccess` (`AWSLambda_FullAccess` has an underscore). */
const BROAD_MANAGED_POLICY = /:policy\/(AdministratorAccess|PowerUserAccess|[A-Za-z0-9_]*FullAccess)$/;

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
            out.push(`${where}: Allow with ${s.NotAction !== undefined ? "NotAction" : "NotResource"} grants everything not listed; list the actions and resources instead`);
        }
        const actions = list(s.Action).map(String);
        const broad = actions.filter((a) => a === "*" || /^[a-z0-9-]+:\*$/i.test(a));
        if (broad.length > 0) out.push(`${where}: action ${broad.map((a) => JSON.stringify(a)).join(", ")} grants every action of ${broad.includes("*") ? "every service" : "the service"}; name the actions the function calls`);
        const resources = list(s.Resource).map(String);
        const needsArn = actions.filter((a) => !WILDCARD_RESOURCE_ACTIONS.includes(a));
        if (resources.includes("*") && needsArn.length > 0) {
            out.push(`${where}: resource "*" on ${needsArn.map((a) => JSON.stringify(a)).join(", ")}; scope them to the outbox's ARNs (only ${WILDCARD_RESOURCE_ACTIONS.join(", ")} require "*")`);
        }
    });
    return out;
}

/** The SSE state of an SQS queue's props: `kms`, `sqs` (SSE-SQS, on by default for new queues) or `none`. */
function queueEncryption(props: Props): "kms" | "sqs" | "none" {
    if (typeof props.kmsMasterKeyId === "string" && props.kmsMasterKeyId !== "") return "kms";
    return props.sqsManagedSseEnabled === false ? "none" : "sqs";
}

/** One resource as a stack policy sees it. */
export interface StackResourceView {
    /** The type token. */
    readonly type: string;
    /** The logical name. */
    readonly name: string;
    /** The URN. */
    readonly urn: string;
    /** The resource's properties (outputs, for a stack policy). */
    readonly props: Props;
}

const TYPES = {
    table: "aws:dynamodb/table:Table",
    mapping: "aws:lambda/eventSourceMapping:EventSourceMapping",
    queue: "aws:sqs/queue:Queue",
    topic: "aws:sns/topic:Topic",
    fn: "aws:lambda/function:Function",
} as const;

/**
 * Encryption-at-rest violations of each outbox in the stack, found from its stream mapping: the DLQ (the mapping's
 * on-failure destination) must be encrypted (SSE-SQS or KMS); and when the outbox table uses a customer managed
 * KMS key, the DLQ and the publisher's topic must use a KMS key too, or payloads the table keeps under that key
 * sit in the DLQ, or pass through the topic, without it.
 *
 * @param resources - The stack's resources with their outputs (`streamArn`, `arn`, `name`).
 * @param recognise - `isOutboxTable` and `isOutboxMapping` of `policies.ts`.
 */
export function encryptionAtRestViolations(resources: readonly StackResourceView[], recognise: OutboxRecognisers): { urn: string; message: string }[] {
    const out: { urn: string; message: string }[] = [];
    const of = (type: string) => resources.filter((r) => r.type === type);
    const tables = of(TYPES.table).filter((t) => recognise.isOutboxTable(t.props));
    for (const mapping of of(TYPES.mapping)) {
        const table = tables.find((t) => typeof t.props.streamArn === "string" && t.props.streamArn === mapping.props.eventSourceArn);
        if (table === undefined && !recognise.isOutboxMapping(mapping.props)) continue;
        const customerKey: unknown = table?.props.serverSideEncryption?.enabled === true ? table.props.serverSideEncryption.kmsKeyArn : undefined;
        const tableText = table === undefined ? "the outbox table" : `outbox table "${table.name}"`;
        const dlqArn: unknown = mapping.props.destinationConfig?.onFailure?.destinationArn;
        const queue = of(TYPES.queue).find((q) => q.props.arn !== undefined && q.props.arn === dlqArn);
        if (queue !== undefined) {
            const sse = queueEncryption(queue.props);
            if (sse === "none") {
                out.push({ urn: queue.urn, message: `outbox DLQ "${queue.name}" is not encrypted at rest (sqsManagedSseEnabled: false, no kmsMasterKeyId); it holds whole payloads: remove sqsManagedSseEnabled: false or set kmsMasterKeyId` });
            } else if (typeof customerKey === "string" && sse !== "kms") {
                out.push({ urn: queue.urn, message: `outbox DLQ "${queue.name}" uses SSE-SQS while ${tableText} is encrypted with the customer managed key ${customerKey}; set kmsMasterKeyId to that key (the Outbox component does when kmsKeyArn is given)` });
            }
        }
        if (typeof customerKey !== "string") continue;
        const fn = of(TYPES.fn).find((f) => f.props.arn === mapping.props.functionName || f.props.name === mapping.props.functionName);
        const topicArn: unknown = fn?.props.environment?.variables?.[ENV.topicArn];
        const topic = of(TYPES.topic).find((t) => t.props.arn !== undefined && t.props.arn === topicArn);
        if (topic !== undefined && !(typeof topic.props.kmsMasterKeyId === "string" && topic.props.kmsMasterKeyId !== "")) {
            out.push({ urn: topic.urn, message: `outbox topic "${topic.name}" has no kmsMasterKeyId while ${tableText} is encrypted with the customer managed key ${customerKey}; set kmsMasterKeyId to that key (the Outbox component does when kmsKeyArn is given)` });
        }
    }
    return out;
}

function validateDocuments(subject: string, documents: unknown[], reportViolation: (message: string) => void): void {
    documents.forEach((d, i) => {
        for (const v of leastPrivilegeViolations(documents.length > 1 ? `${subject} ${i}` : subject, d)) reportViolation(v);
    });
}

/**
 * The security policies: least privilege (resource policy) and encryption at rest (stack policy). Mandatory.
 *
 * @param recognise - `isOutboxTable` and `isOutboxMapping` of `policies.ts`.
 */
export function outboxSecurityPolicies(recognise: OutboxRecognisers): (ResourceValidationPolicy | StackValidationPolicy)[] {
    return [
    {
        name: "outbox-least-privilege",
        description:
            "No IAM document in an outbox stack allows `*` or `service:*` actions, NotAction or NotResource, or a `*` resource on an action that takes ARNs; no role gets AdministratorAccess, PowerUserAccess or a *FullAccess managed policy.",
        enforcementLevel: "mandatory",
        validateResource: [
            validateResourceOfType(aws.iam.Role, (props, args, reportViolation) => {
                validateDocuments(`role "${args.name}" inline policy`, list(props.inlinePolicies).map((p) => (p as Props)?.policy), reportViolation);
            }),
            validateResourceOfType(aws.iam.RolePolicy, (props, args, reportViolation) => validateDocuments(`role policy "${args.name}"`, [props.policy], reportViolation)),
            validateResourceOfType(aws.iam.Policy, (props, args, reportViolation) => validateDocuments(`policy "${args.name}"`, [props.policy], reportViolation)),
            validateResourceOfType(aws.iam.RolePolicyAttachment, (props, args, reportViolation) => {
                if (typeof props.policyArn === "string" && BROAD_MANAGED_POLICY.test(props.policyArn)) {
                    reportViolation(`role policy attachment "${args.name}" attaches ${props.policyArn}, far beyond what an outbox function needs; grant the actions in an inline policy scoped to the outbox's ARNs`);
                }
            }),
        ],
    },
    {
        name: "outbox-encryption-at-rest",
        description:
            "An outbox's DLQ is encrypted at rest; when the outbox table uses a customer managed KMS key, the DLQ and the publisher's topic use a KMS key too.",
        enforcementLevel: "mandatory",
        validateStack: (args, reportViolation) => {
            for (const v of encryptionAtRestViolations(args.resources, recognise)) reportViolation(v.message, v.urn);
        },
    },
    ];
}
