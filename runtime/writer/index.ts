/**
 * runtime/writer/: the write path. `OutboxWriter` (writer.ts) turns the caller's messages into outbox records in
 * the caller's own transaction; the checks that refuse, before anything is sent, what could not be delivered
 * whole: a message's fields (outbox-message.ts), its payload (payload-json.ts, sendable-text.ts), the transaction's
 * size (transaction-size.ts); the reading of a cancelled transaction (transaction-failure.ts); the trace context a
 * message carries (message-trace.ts); on a global table, the region a record is stamped with (origin-region.ts) and
 * the rule that writes each partition from its home region (key-homing.ts); and the redrive, which writes
 * dead-lettered messages back through a writer (redrive.ts).
 *
 * May import: the runtime's root files, record/, store/, destination/, observability/ and claim-check/ (the
 * writer's offload). Never relay/ nor inbox/ (eslint.config.mjs).
 *
 * This file is the folder's map, not a barrel: it exports nothing and nothing imports it, and tsconfig.build.json
 * leaves it out of dist/. runtime/index.ts and the other modules import the files themselves, so a Lambda loads only
 * the modules it runs.
 */
