"""One Outbox, declared from Python through the generated SDK (snake_case args and outputs)."""

import pulumi
import pulumi_dynamodb_outbox as dynamodb_outbox

orders = dynamodb_outbox.Outbox(
    "orders",
    maximum_retry_attempts=5,
    memory_size=512,
    deletion_protection=True,
    sweep_schedule="rate(5 minutes)",
    tags={"team": "payments"},
)

pulumi.export("tableName", orders.table_name)
pulumi.export("tableArn", orders.table_arn)
pulumi.export("streamArn", orders.stream_arn)
pulumi.export("destinationArn", orders.destination_arn)
pulumi.export("topicArn", orders.topic_arn)
pulumi.export("dlqUrl", orders.dlq_url)
pulumi.export("dlqArn", orders.dlq_arn)
pulumi.export("publisherFunctionName", orders.publisher_function_name)
pulumi.export("sweeperFunctionName", orders.sweeper_function_name)
pulumi.export("writerPolicy", orders.writer_policy)
pulumi.export("payloadBucketName", orders.payload_bucket_name)
pulumi.export("readerPolicy", orders.reader_policy)
pulumi.export("alarmArns", orders.alarm_arns)
