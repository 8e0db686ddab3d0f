/**
 * Validation of `vpc` (the subnets and security groups both functions run in), in the terms of `validation.ts`: the
 * arg path, the bad value, what is allowed and the fix.
 *
 * @packageDocumentation
 */
import type { OutboxArgs } from "./args";
import type { OutboxArgProblem } from "./arg-problem";
import { isUnknown, show } from "./arg-checks";

/** A subnet ID. */
const SUBNET_ID = /^subnet-[0-9a-f]{8,17}$/;
/** A security group ID. */
const SECURITY_GROUP_ID = /^sg-[0-9a-f]{8,17}$/;

/** Lambda's limits on a function's `vpcConfig`. */
export const VPC_LIMITS = { subnetIds: 16, securityGroupIds: 5 } as const;

/**
 * The problems of `vpc`: not an object, or a plain list of subnets or security groups that is empty, too long or
 * holds something that is not such an ID. A list that is an Output, or an ID that is one, is checked by AWS.
 *
 * @param args - The component args.
 * @param problems - Where the problems go.
 */
export function checkVpc(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    const vpc: unknown = args.vpc;
    if (vpc === undefined || isUnknown(vpc)) return;
    if (typeof vpc !== "object" || vpc === null || Array.isArray(vpc)) {
        problems.push({
            path: "args.vpc",
            value: show(vpc),
            allowed: "an object { subnetIds, securityGroupIds }",
            fix: 'pass e.g. { subnetIds: ["subnet-0123456789abcdef0"], securityGroupIds: ["sg-0123456789abcdef0"] }',
        });
        return;
    }
    const checks = [
        { key: "subnetIds", pattern: SUBNET_ID, noun: "subnet IDs (subnet-…)" },
        { key: "securityGroupIds", pattern: SECURITY_GROUP_ID, noun: "security group IDs (sg-…)" },
    ] as const;
    for (const { key, pattern, noun } of checks) {
        const ids: unknown = (vpc as Record<string, unknown>)[key];
        if (isUnknown(ids)) continue;
        const max = VPC_LIMITS[key];
        const valid =
            Array.isArray(ids) &&
            ids.length >= 1 &&
            ids.length <= max &&
            ids.every((id) => isUnknown(id) || (typeof id === "string" && pattern.test(id)));
        if (!valid) {
            problems.push({
                path: `args.vpc.${key}`,
                value: show(ids),
                allowed: `a list of 1 to ${max} ${noun}`,
                fix: `pass the ${noun.split(" (")[0]} the functions run in, e.g. a VPC's private subnets`,
            });
        }
    }
}
