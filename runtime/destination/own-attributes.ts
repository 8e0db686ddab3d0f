/**
 * The message attributes the publisher sends, kept as it built them, whatever else runs in its process.
 *
 * OpenTelemetry's AWS SDK instrumentation (`@opentelemetry/instrumentation-aws-sdk`, which the ADOT Lambda layer and
 * Node auto-instrumentation load) injects its own span's context into the `MessageAttributes` of every `SendMessage`
 * and every `SendMessageBatch` entry: it overwrites the writer's `traceparent` and leaves the writer's `tracestate`
 * beside it, a mismatched pair, and gives a record written without a trace context the relay's. It does so in its
 * wrapper of the middleware stack's `resolve`, before the first middleware runs (0.79.0: `requestPostSpanHook` in
 * `dist/aws-sdk.cjs`, the `SendMessageBatch` case in `dist/services/sqs.cjs`, the `Publish` case in
 * `dist/services/sns.cjs`).
 *
 * {@link keepOwnAttributes} adds a middleware to the one command (never to the caller's client, which other code
 * shares) that puts back each message's attributes as the publisher built them, at the front of the serialize step:
 * after that wrapper and every initialize-step middleware, just before the input becomes the request. A message
 * then carries exactly the outbox's attributes: the writer's trace context, or none. The relay's span is not the
 * event's creation context, and attributes added beside the outbox's would count toward the 10 a message carries
 * and toward the call's size, which the publisher measured without them.
 *
 * @packageDocumentation
 */

/** A message of a command's input: an SQS batch entry, an SNS batch entry, or a `SendMessage` input itself. */
export interface AttributeCarrier {
    /** Its message attributes. @default undefined */
    MessageAttributes?: Record<string, unknown>;
}

/** The arguments a middleware of the serialize step receives: the command's input among them. */
interface SerializeArguments<Input> {
    readonly input: Input;
}

/** The part of an AWS SDK v3 command this module touches: its input, and its own middleware stack. */
export interface CommandWithStack<Input extends object> {
    /** The command's input. */
    readonly input: Input;
    /** The command's own middleware stack (the client's is another). */
    readonly middlewareStack: {
        add(
            middleware: <Output>(
                next: (args: SerializeArguments<Input>) => Promise<Output>,
            ) => (args: SerializeArguments<Input>) => Promise<Output>,
            options: { step: "serialize"; priority: "high"; name: string },
        ): void;
    };
}

/** The middleware's name on the command's stack. */
export const OWN_ATTRIBUTES_MIDDLEWARE = "dynamodbOutboxOwnMessageAttributes";

/** A copy of an attribute map: values copied too, so nothing that mutates the input reaches the copy. */
function copyOf(attributes: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> | undefined {
    if (attributes === undefined) return undefined;
    const copy: Record<string, unknown> = {};
    for (const name of Object.keys(attributes)) {
        const value = attributes[name];
        copy[name] = value !== null && typeof value === "object" ? { ...value } : value;
    }
    return copy;
}

/**
 * Give a command a middleware of its own that restores, when it is sent, the message attributes its messages have
 * now.
 *
 * @param command - A command built with the attributes the publisher means to send.
 * @param messagesOf - The messages of an input: `input.Entries`, `input.PublishBatchRequestEntries`, or `[input]`.
 */
export function keepOwnAttributes<Input extends object>(
    command: CommandWithStack<Input>,
    messagesOf: (input: Input) => readonly AttributeCarrier[] | undefined,
): void {
    const built = (messagesOf(command.input) ?? []).map((m) => copyOf(m.MessageAttributes));
    command.middlewareStack.add(
        (next) => async (args) => {
            const messages = messagesOf(args.input) ?? [];
            messages.forEach((message, i) => {
                const own = copyOf(built[i]);
                if (own !== undefined) message.MessageAttributes = own;
                else delete message.MessageAttributes;
            });
            return next(args);
        },
        { step: "serialize", priority: "high", name: OWN_ATTRIBUTES_MIDDLEWARE },
    );
}
