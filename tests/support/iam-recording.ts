/**
 * The IAM authorizations real SDK calls need, recorded as they are sent: the policy tests derive what a role must
 * be granted from what the runtime really calls, instead of from a list written by hand.
 */
import { TransactWriteItemsCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";

/** One IAM authorization a command needs: the action and the table it is on. */
export interface Authorization {
    readonly action: string;
    readonly table: string;
}

const TRANSACT_ITEM_ACTIONS: Record<string, string> = {
    Put: "dynamodb:PutItem",
    Update: "dynamodb:UpdateItem",
    Delete: "dynamodb:DeleteItem",
    ConditionCheck: "dynamodb:ConditionCheckItem",
};

/**
 * The authorizations of one SDK command, as AWS checks them: TransactWriteItems has no IAM action of its own,
 * each item is authorized as its own PutItem/UpdateItem/DeleteItem/ConditionCheckItem on its table.
 */
export function authorizationsOf(command: {
    constructor: { name: string };
    input: Record<string, any>;
}): Authorization[] {
    if (command instanceof TransactWriteItemsCommand) {
        return (command.input.TransactItems ?? []).flatMap((item) =>
            Object.entries(item)
                .filter(([, body]) => body !== undefined)
                .map(([kind, body]) => ({
                    action: TRANSACT_ITEM_ACTIONS[kind]!,
                    table: (body as { TableName: string }).TableName,
                })),
        );
    }
    return [
        {
            action: `dynamodb:${command.constructor.name.replace(/Command$/, "")}`,
            table: command.input.TableName ?? command.input.IndexName ?? "",
        },
    ];
}

/** A client that records every command it forwards to DynamoDB Local. */
export function recordingClient(client: DynamoDBClient, sent: Authorization[]): DynamoDBClient {
    return {
        send: (command: never) => {
            sent.push(...authorizationsOf(command));
            return client.send(command);
        },
    } as unknown as DynamoDBClient;
}
