/**
 * One AWS fault server per test, as the fault server's own tests run it: started (seed 7) before each test, with
 * SDK clients on it, and, after the test, every client destroyed and the server stopped.
 */
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { SQSClient } from "@aws-sdk/client-sqs";
import { startAwsFaultServer, type AwsFaultServer } from "../../dev/emulators/aws-fault-server";
import { localClientConfig } from "./local-aws-client";

/** The current test's fault server and its clients (read them inside a test or hook, not at describe time). */
export interface FaultServerEach {
    /** The current test's server. */
    readonly server: AwsFaultServer;
    /** An SQS client on it. */
    readonly sqs: SQSClient;
    /** An EventBridge client on it. */
    readonly events: EventBridgeClient;
    /**
     * A client of one's own on it, destroyed after the test as the others are.
     * @param make - Builds the client from the server's local client config.
     */
    client<C extends { destroy(): void }>(make: (config: ReturnType<typeof localClientConfig>) => C): C;
}

/**
 * Registers the hooks (in the calling `describe`) that give each test a fresh fault server; clients are made on
 * first use in a test.
 */
export function faultServerEach(): FaultServerEach {
    let server: AwsFaultServer | undefined;
    let clients: { destroy(): void }[] = [];
    let sqs: SQSClient | undefined;
    let events: EventBridgeClient | undefined;
    beforeEach(async () => {
        server = await startAwsFaultServer({ seed: 7 });
    });
    afterEach(async () => {
        for (const c of clients) c.destroy();
        clients = [];
        sqs = undefined;
        events = undefined;
        await server?.stop();
        server = undefined;
    });
    const each: FaultServerEach = {
        get server() {
            if (server === undefined) throw new Error("the fault server runs only inside a test");
            return server;
        },
        get sqs() {
            return (sqs ??= each.client((config) => new SQSClient(config)));
        },
        get events() {
            return (events ??= each.client((config) => new EventBridgeClient(config)));
        },
        client(make) {
            const c = make(localClientConfig(each.server.endpoint));
            clients.push(c);
            return c;
        },
    };
    return each;
}
