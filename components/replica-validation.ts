/**
 * Validation of `replicaRegions` (the table's replicas, each with a relay of its own), in the terms of
 * `validation.ts`: the arg path, the bad value, what is allowed and the fix. The home region is the provider's, known
 * only as an Output: `components/replica-regions.ts` refuses a replica there when it resolves.
 *
 * @packageDocumentation
 */
import { REGION_NAME } from "../runtime/record/origin";
import type { OutboxArgs } from "./args";
import type { OutboxArgProblem } from "./arg-problem";
import { isUnknown, listArg, show } from "./arg-checks";
import { isPlainObject } from "./transform";

/**
 * The longest component name plus `-<region>`: each replica region's children are named `<name>-<region>-<suffix>`,
 * and the same 40 characters as the component's name keep their function and role names within AWS's 64.
 */
export const REGION_CHILD_PREFIX_MAX_LENGTH = 40;

/**
 * The args a table with replicas cannot take, and why: each is checked when `replicaRegions` holds a region.
 */
const NOT_WITH_REPLICAS: readonly {
    readonly present: (args: OutboxArgs) => boolean;
    readonly problem: OutboxArgProblem;
}[] = [
    {
        present: (args) => args.kmsKeyArn !== undefined,
        problem: {
            path: "args.kmsKeyArn",
            value: "set, with replicaRegions",
            allowed:
                "no customer managed key with replicaRegions: a KMS key is regional, and each replica and each region's DLQ would need a key of its region",
            fix: "omit kmsKeyArn (the table, its replicas and the DLQs are then encrypted with AWS owned or SQS-managed keys), or omit replicaRegions",
        },
    },
    {
        present: (args) => args.vpc !== undefined,
        problem: {
            path: "args.vpc",
            value: "set, with replicaRegions",
            allowed:
                "no VPC with replicaRegions: subnets and security groups are regional, and every region's functions would get the home region's",
            fix: "omit vpc, or omit replicaRegions",
        },
    },
    {
        present: (args) => args.queueArn !== undefined,
        problem: {
            path: "args.queueArn",
            value: "set, with replicaRegions",
            allowed:
                "an SNS topic (created or topicArn) or an EventBridge bus (eventBusArn) with replicaRegions: a replica region's relay sends to its own DLQ and to the destination queue with one SQS client, which cannot reach a queue of another region",
            fix: "publish to a topic or a bus, or omit replicaRegions",
        },
    },
    {
        present: (args) => args.billingMode === "PROVISIONED",
        problem: {
            path: "args.billingMode",
            value: '"PROVISIONED", with replicaRegions',
            allowed:
                '"PAY_PER_REQUEST" with replicaRegions: DynamoDB refuses a replica of a provisioned table without auto scaling, which the component does not declare',
            fix: 'omit billingMode (or set "PAY_PER_REQUEST"), or omit replicaRegions',
        },
    },
    {
        present: (args) => {
            const transform: unknown = args.transform;
            const table: unknown = isPlainObject(transform) ? transform.table : undefined;
            return isPlainObject(table) && table.replicas !== undefined;
        },
        problem: {
            path: "args.transform.table.replicas",
            value: "set, with replicaRegions",
            allowed: "nothing: replicaRegions declares the replicas, and a region of transform's would have no relay",
            fix: "list the regions in replicaRegions and remove replicas from transform.table",
        },
    },
];

/**
 * The problems of `replicaRegions`: not a plain list, an entry that is not a region name, a region listed twice, a
 * region whose children's names would be too long, and the args a table with replicas cannot take
 * ({@link NOT_WITH_REPLICAS}). An Output is refused by `validation.ts`'s plain-only check.
 *
 * @param args - The component args.
 * @param name - The component's name, when known.
 * @param problems - Where the problems go.
 */
export function checkReplicaRegions(args: OutboxArgs, name: string | undefined, problems: OutboxArgProblem[]): void {
    const regions = listArg(
        args,
        "replicaRegions",
        {
            allowed: 'a list of AWS region names, e.g. ["us-west-2"]',
            fix: "pass the replicas' regions as a list, or omit it for a single-region table",
        },
        problems,
    );
    if (regions === undefined) return;
    const seen = new Set<string>();
    regions.forEach((region: unknown, i) => {
        const path = `args.replicaRegions[${i}]`;
        if (typeof region !== "string" || !REGION_NAME.test(region)) {
            problems.push({
                path,
                value: isUnknown(region) ? "an Output (not known until deployment)" : show(region),
                allowed: 'a plain AWS region name like "us-west-2" (each region\'s children are declared from it)',
                fix: "pass the region's name as a string",
            });
            return;
        }
        if (seen.has(region)) {
            problems.push({
                path,
                value: show(region),
                allowed: "each region once",
                fix: `remove the second ${show(region)}`,
            });
            return;
        }
        seen.add(region);
        if (name !== undefined && name.length + 1 + region.length > REGION_CHILD_PREFIX_MAX_LENGTH) {
            problems.push({
                path,
                value: show(region),
                allowed: `a region whose children's prefix "${name}-${region}" is at most ${REGION_CHILD_PREFIX_MAX_LENGTH} characters (it is ${name.length + 1 + region.length}; AWS caps function and role names at 64)`,
                fix: `shorten the component's name to at most ${REGION_CHILD_PREFIX_MAX_LENGTH - 1 - region.length} characters`,
            });
        }
    });
    if (regions.length === 0) return;
    for (const rule of NOT_WITH_REPLICAS) if (rule.present(args)) problems.push(rule.problem);
}
