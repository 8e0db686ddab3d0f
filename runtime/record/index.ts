/**
 * runtime/record/: the outbox record and what is built from it, shared by the writer, the relay, the store and the
 * inbox. Its key space (keys.ts), its item codec (codec.ts), GoBridge's envelope (envelope.ts), the FENCE row
 * (fence.ts), the id guard row (id-guard.ts), the expiry shard (expiry-shard.ts), DynamoDB's item sizes
 * (item-size.ts), the message built from a record and its limits (message.ts), the caller's own transaction
 * actions (transact-items.ts) and those actions in the DocumentClient's shape, which the writer and the inbox both
 * take (document-items.ts), typed events: event maps, Standard Schema validators and schema versions, which the writer
 * and the inbox both check (typed-events.ts), and what the writer and the claim check both need: the payload error
 * (payload-error.ts) and a redriven record's id (redrive-id.ts); and the set fields of an object, for what is built
 * with only what is set (defined-fields.ts).
 *
 * May import: the runtime's root files and store/'s AWS error helpers. Never writer/, relay/, inbox/ nor
 * claim-check/ (eslint.config.mjs).
 *
 * This file is the folder's map, not a barrel: it exports nothing and nothing imports it, and tsconfig.build.json
 * leaves it out of dist/. runtime/index.ts and the other modules import the files themselves, so a Lambda loads only
 * the modules it runs.
 */
