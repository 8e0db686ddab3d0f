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

/** One SDK call, as its client's middleware stack saw it leave. */
export interface RecordedCall {
    /** The client's class, e.g. `DynamoDBClient`, `SNSClient`. */
    readonly client: string;
    /** The command's name without `Command`, e.g. `PublishBatch`. */
    readonly command: string;
    /** The command's input. */
    readonly input: Record<string, any>;
}

/** The part of an SDK v3 client's middleware stack the recorder uses. */
interface MiddlewareClient {
    readonly middlewareStack: {
        add(
            middleware: (
                next: (args: { input: object }) => Promise<unknown>,
                context: { clientName?: string; commandName?: string },
            ) => (args: { input: object }) => Promise<unknown>,
            options: { step: "initialize"; name: string },
        ): void;
    };
}

/**
 * Record every command `client` sends, as it enters the client's middleware stack (what the runtime's own code
 * calls, whatever wraps the client), into `calls`. Returns the client.
 */
export function recordCalls<C>(client: C, calls: RecordedCall[]): C {
    (client as unknown as MiddlewareClient).middlewareStack.add(
        (next, context) => async (args) => {
            calls.push({
                client: context.clientName ?? "",
                command: (context.commandName ?? "").replace(/Command$/, ""),
                input: args.input as Record<string, any>,
            });
            return next(args);
        },
        { step: "initialize", name: "iamCallRecorder" },
    );
    return client;
}

/** One IAM authorization a call needs: the action, and the resource's ARN. */
export interface ArnAuthorization {
    readonly action: string;
    readonly resource: string;
}

/** The kinds of local resource a call names, which a test maps to the component's ARNs. */
export type LocalResourceKind = "table" | "stream" | "queue" | "topic" | "bus" | "bucket";

/** The component's ARN for a local resource named `local` (a table name, a queue URL, a topic ARN, a bucket…). */
export type ArnOf = (kind: LocalResourceKind, local: string) => string;

/**
 * The IAM authorizations one call needs, as AWS documents them:
 * - DynamoDB: `TransactWriteItems` has no action of its own, each item is its own PutItem/UpdateItem/DeleteItem/
 *   ConditionCheckItem on its table; `BatchGetItem` is authorized on each table it reads; a Query or a Scan of an
 *   index on the index's ARN (`<table>/index/<name>`);
 * - DynamoDB Streams: on the stream (`GetRecords` names only an iterator: its stream is the run's one);
 * - SNS: `PublishBatch` is authorized as `sns:Publish`; SQS: `SendMessageBatch` as `sqs:SendMessage`;
 * - EventBridge: `PutEvents` on each entry's bus, `DescribeEventBus` on the bus;
 * - S3: `PutObject` / `GetObject` on the object's ARN.
 *
 * @throws Error for a call no rule here maps: add its rule rather than let an unknown call pass unjudged.
 */
export function iamAuthorizations(call: RecordedCall, arnOf: ArnOf): ArnAuthorization[] {
    const { input } = call;
    switch (call.client) {
        case "DynamoDBClient": {
            if (call.command === "TransactWriteItems")
                return (input.TransactItems as Record<string, { TableName: string } | undefined>[]).flatMap((item) =>
                    Object.entries(item)
                        .filter(([, body]) => body !== undefined)
                        .map(([kind, body]) => ({
                            action: TRANSACT_ITEM_ACTIONS[kind]!,
                            resource: arnOf("table", body!.TableName),
                        })),
                );
            if (call.command === "BatchGetItem" || call.command === "BatchWriteItem")
                return Object.keys(input.RequestItems as object).map((table) => ({
                    action: `dynamodb:${call.command}`,
                    resource: arnOf("table", table),
                }));
            const table = arnOf("table", input.TableName as string);
            const indexed = (call.command === "Query" || call.command === "Scan") && input.IndexName !== undefined;
            return [
                {
                    action: `dynamodb:${call.command}`,
                    resource: indexed ? `${table}/index/${String(input.IndexName)}` : table,
                },
            ];
        }
        case "DynamoDBStreamsClient":
            if (call.command === "ListStreams") return [{ action: "dynamodb:ListStreams", resource: "*" }];
            return [{ action: `dynamodb:${call.command}`, resource: arnOf("stream", String(input.StreamArn ?? "")) }];
        case "SNSClient":
            if (call.command === "Publish" || call.command === "PublishBatch")
                return [{ action: "sns:Publish", resource: arnOf("topic", input.TopicArn as string) }];
            break;
        case "SQSClient": {
            const action = call.command === "SendMessageBatch" ? "SendMessage" : call.command;
            return [{ action: `sqs:${action}`, resource: arnOf("queue", input.QueueUrl as string) }];
        }
        case "EventBridgeClient":
            if (call.command === "PutEvents")
                return [
                    ...new Set((input.Entries as { EventBusName?: string }[]).map((e) => e.EventBusName ?? "default")),
                ].map((bus) => ({ action: "events:PutEvents", resource: arnOf("bus", bus) }));
            if (call.command === "DescribeEventBus")
                return [{ action: "events:DescribeEventBus", resource: arnOf("bus", input.Name as string) }];
            break;
        case "S3Client":
            if (call.command === "PutObject" || call.command === "GetObject")
                return [
                    {
                        action: `s3:${call.command}`,
                        resource: `${arnOf("bucket", input.Bucket as string)}/${String(input.Key)}`,
                    },
                ];
            break;
    }
    throw new Error(`no IAM rule for ${call.client} ${call.command}: add it to tests/support/iam-recording.ts`);
}

/** An IAM policy statement as the component writes them. */
export interface GrantStatement {
    readonly Sid?: string;
    readonly Effect: string;
    readonly Action: readonly string[];
    readonly Resource: readonly string[];
}

/**
 * Whether an IAM pattern (`*` any run, `?` one character) matches `value`, as IAM matches actions (case-insensitive)
 * and ARNs (case-sensitive).
 */
export function iamMatches(pattern: string, value: string, ignoreCase = false): boolean {
    const re = pattern
        .replace(/[.+^${}()|[\]\\]/g, "\\$&")
        .replace(/\*/g, ".*")
        .replace(/\?/g, ".");
    return new RegExp(`^${re}$`, ignoreCase ? "i" : "").test(value);
}

/** The statements of `statements` that allow `a`. */
export function allowing(statements: readonly GrantStatement[], a: ArnAuthorization): GrantStatement[] {
    return statements.filter(
        (s) =>
            s.Effect === "Allow" &&
            s.Action.some((p) => iamMatches(p, a.action, true)) &&
            s.Resource.some((p) => iamMatches(p, a.resource)),
    );
}

/**
 * `run()`, with every command any client of `clientClass` sends meanwhile recorded into `calls` (the class's `send`
 * wrapped for the span: for a client built where no test can reach it, inside serialized code; nothing else in the
 * process may send meanwhile).
 *
 * @param clientClass - The SDK client class (`DynamoDBClient`, `S3Client`: the aggregated client is one of it).
 * @param calls - Where each command is recorded.
 * @param run - What sends.
 */
export async function recordingSends<T>(
    clientClass: { readonly name: string; readonly prototype: object },
    calls: RecordedCall[],
    run: () => Promise<T>,
): Promise<T> {
    type Send = (...args: any[]) => unknown;
    const prototype = clientClass.prototype as { send?: Send };
    const own = Object.prototype.hasOwnProperty.call(prototype, "send");
    const send = prototype.send!;
    prototype.send = function (this: unknown, command: any, ...rest: any[]) {
        calls.push({
            client: clientClass.name,
            command: String(command.constructor.name).replace(/Command$/, ""),
            input: command.input as Record<string, any>,
        });
        return send.call(this, command, ...rest);
    };
    try {
        return await run();
    } finally {
        if (own) prototype.send = send;
        else delete prototype.send;
    }
}
