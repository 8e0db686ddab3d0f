/**
 * The ARNs the tests give as examples, built one way: every kind a destination or a consumer's function can be,
 * for one resource name, in one region and account.
 */

/** Where an example resource is. */
export interface ArnPlace {
    /** @default "us-east-1" */
    readonly region?: string;
    /** @default "111111111111" */
    readonly account?: string;
}

/** One name's ARN as each kind of resource. */
export interface ExampleArns {
    /** An SNS standard topic. */
    readonly topic: string;
    /** An SNS FIFO topic (`<name>.fifo`). */
    readonly fifoTopic: string;
    /** An SQS standard queue. */
    readonly queue: string;
    /** An SQS FIFO queue (`<name>.fifo`). */
    readonly fifoQueue: string;
    /** An EventBridge event bus. */
    readonly bus: string;
    /** A Lambda function. */
    readonly function: string;
}

/**
 * The ARNs of a resource named `name` as each kind.
 * @param name - The resource's name (without `.fifo`).
 * @param place - Its region and account. @default {}
 */
export function exampleArns(name: string, place: ArnPlace = {}): ExampleArns {
    const { region = "us-east-1", account = "111111111111" } = place;
    const at = `${region}:${account}`;
    return {
        topic: `arn:aws:sns:${at}:${name}`,
        fifoTopic: `arn:aws:sns:${at}:${name}.fifo`,
        queue: `arn:aws:sqs:${at}:${name}`,
        fifoQueue: `arn:aws:sqs:${at}:${name}.fifo`,
        bus: `arn:aws:events:${at}:event-bus/${name}`,
        function: `arn:aws:lambda:${at}:function:${name}`,
    };
}
