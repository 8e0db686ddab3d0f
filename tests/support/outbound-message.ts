import type { OutboundMessage } from "../../runtime/record/message";

/** An outbound message of type "T" on partition "P", with `over` laid on top. */
export const outboundMessage = (over: Partial<OutboundMessage> = {}): OutboundMessage => ({
    id: "id-1",
    type: "T",
    partition: "P",
    body: '{"a":1}',
    headers: {},
    createdAt: 0,
    expiresAt: 0,
    ...over,
});
