/**
 * runtime/claim-check/: large payloads, kept in S3 and replaced by a pointer. The pointer (pointer.ts) and the
 * object client both sides use (object-client.ts); the writer's side, which offloads a payload too large for a
 * message (offload.ts); the consumer's side, which reads it back (resolver.ts).
 *
 * May import: the runtime's root files, record/, store/ and observability/; and inbox/ (the delivery formats), for
 * the consumer's side. Never writer/ nor relay/ (eslint.config.mjs): what it shares with the writer, the payload
 * error and a redriven record's id, sits in record/.
 *
 * This file is the folder's map, not a barrel: it exports nothing and nothing imports it, and tsconfig.build.json
 * leaves it out of dist/. runtime/index.ts and the other modules import the files themselves, so a Lambda loads only
 * the modules it runs.
 */
