// An application stack that writes events with OutboxWriter. It reads the outbox stack's outputs through a
// StackReference and attaches the outbox's `writerPolicy` to its function's role: no hand-written IAM.
import * as pulumi from "@pulumi/pulumi";
import * as aws from "@pulumi/aws";

const outbox = new pulumi.StackReference("acme/orders-outbox/prod");

const role = new aws.iam.Role("orders-api", {
    assumeRolePolicy: aws.iam.assumeRolePolicyForPrincipal(aws.iam.Principals.LambdaPrincipal),
});
new aws.iam.RolePolicy("orders-api-outbox-writer", {
    role: role.id,
    policy: outbox.requireOutput("writerPolicy"),
});

const api = new aws.lambda.Function("orders-api", {
    role: role.arn,
    runtime: aws.lambda.Runtime.NodeJS22dX,
    handler: "index.handler",
    code: new pulumi.asset.FileArchive("./app"),
    environment: {
        variables: {
            OUTBOX_TABLE_NAME: outbox.requireOutput("tableName"),
            // Recorded with each event as its address: the topic, queue or bus the outbox publishes to.
            OUTBOX_DESTINATION_ARN: outbox.requireOutput("destinationArn"),
        },
    },
});

export const functionName = api.name;
