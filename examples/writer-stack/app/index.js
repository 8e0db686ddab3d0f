// The function's code: one transaction writes the order and its event.
const { DynamoDBClient } = require("@aws-sdk/client-dynamodb");
const { OutboxWriter } = require("dynamodb-outbox/runtime");

const writer = new OutboxWriter({
    client: new DynamoDBClient({}),
    tableName: process.env.OUTBOX_TABLE_NAME,
    address: process.env.OUTBOX_DESTINATION_ARN,
});

exports.handler = async (order) => {
    const { messageIds } = await writer.write({
        messages: [{ partition: `ORDER#${order.id}`, type: "OrderCreated", payload: order }],
    });
    return { eventId: messageIds[0] };
};
