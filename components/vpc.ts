/**
 * The two functions in a VPC: `vpc` sets their `vpcConfig`, and a function whose final args (after its `transform`,
 * object or callback) have a `vpcConfig` gets what Lambda needs to manage its network interfaces there, whichever
 * way the `vpcConfig` came.
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import * as aws from "./aws";
import type { OutboxTransforms } from "./args";
import { childOptions } from "./children";
import type { OutboxSettings } from "./settings";
import { transformed } from "./transform";

/**
 * The AWS managed policy a function in a VPC needs, by its name under `arn:<partition>:iam::aws:policy/`. Its
 * default version (v3, edited 2024-01-05) allows `ec2:CreateNetworkInterface`, `ec2:DescribeNetworkInterfaces`,
 * `ec2:DescribeSubnets`, `ec2:DeleteNetworkInterface`, `ec2:AssignPrivateIpAddresses` and
 * `ec2:UnassignPrivateIpAddresses` (and `logs:CreateLogGroup`, `logs:CreateLogStream`, `logs:PutLogEvents`), on `*`:
 * the two Describe actions take no resource ARN, and an inline statement with `*` there is what the policy pack's
 * least-privilege rule refuses, while it accepts this policy. AWS keeps it current when Lambda needs more.
 */
export const VPC_ACCESS_POLICY = "service-role/AWSLambdaVPCAccessExecutionRole";

/**
 * The managed policy's ARN in the partition of `roleArn` (`aws`, `aws-cn`, `aws-us-gov`).
 *
 * @param roleArn - The role's ARN, `arn:<partition>:iam::<account>:role/<name>`.
 */
export function vpcAccessPolicyArn(roleArn: string): string {
    return `arn:${roleArn.split(":")[1] ?? "aws"}:iam::aws:policy/${VPC_ACCESS_POLICY}`;
}

/** The function args `vpc` sets: its subnets and security groups as `vpcConfig`; nothing without a VPC. */
export function vpcConfigOf(s: OutboxSettings): Pick<aws.lambda.FunctionArgs, "vpcConfig"> {
    return s.vpc === undefined
        ? {}
        : { vpcConfig: { subnetIds: s.vpc.subnetIds, securityGroupIds: s.vpc.securityGroupIds } };
}

/** The component a function belongs to: what {@link declareVpcAwareFunction} declares with. */
export interface FunctionOwner {
    /** The component. */
    readonly parent: pulumi.Resource;
    /** The component's name. */
    readonly name: string;
    /** The component's `transform`. */
    readonly t: OutboxTransforms;
    /** The provider of a replica region's function; undefined for the home region's. */
    readonly provider?: pulumi.ProviderResource;
}

/** `dependsOn` with `resource` added, whichever form it was given in. */
function withDependency(
    dependsOn: pulumi.CustomResourceOptions["dependsOn"],
    resource: pulumi.Resource,
): pulumi.CustomResourceOptions["dependsOn"] {
    if (dependsOn === undefined) return [resource];
    if (Array.isArray(dependsOn)) return [...(dependsOn as pulumi.Input<pulumi.Resource>[]), resource];
    if (pulumi.Resource.isInstance(dependsOn)) return [dependsOn, resource];
    return pulumi
        .output(dependsOn as pulumi.Input<pulumi.Resource | pulumi.Resource[]>)
        .apply((d) => [...(Array.isArray(d) ? d : [d]), resource]);
}

/**
 * One of the two functions, its `transform` key applied to `computed`. When the result runs in a VPC (a
 * `vpcConfig` from `vpc` or from the transform) on the component's own role, the role gets the managed policy
 * {@link VPC_ACCESS_POLICY} through a `RolePolicyAttachment` child (`<name>-<function>-vpc-access`, its own
 * `transform` key), and the function depends on it: Lambda checks the role's EC2 permissions when it creates a
 * function in a VPC. A role of the caller's own (`transform.publisher.role`) gets nothing: its grants are the
 * caller's.
 *
 * @param o - The component, its name and `transform`.
 * @param child - Which function.
 * @param computed - The args the component computed for it.
 * @param role - The role the component made for it.
 */
export function declareVpcAwareFunction(
    o: FunctionOwner,
    child: "publisher" | "sweeper",
    computed: aws.lambda.CallbackFunctionArgs<any, any>,
    role: aws.iam.Role,
): aws.lambda.CallbackFunction<any, any> {
    const [name, args, opts] = transformed<aws.lambda.CallbackFunctionArgs<any, any>, pulumi.CustomResourceOptions>(
        o,
        child,
        computed,
        childOptions(o),
    );
    if (args.vpcConfig !== undefined && args.vpcConfig !== null && args.role === role) {
        const access = new aws.iam.RolePolicyAttachment(
            ...transformed(
                o,
                child === "publisher" ? "publisherVpcAccess" : "sweeperVpcAccess",
                { role: role.name, policyArn: role.arn.apply(vpcAccessPolicyArn) },
                childOptions(o),
            ),
        );
        opts.dependsOn = withDependency(opts.dependsOn, access);
    }
    return new aws.lambda.CallbackFunction(name, args, opts);
}
