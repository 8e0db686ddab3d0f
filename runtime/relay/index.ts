/**
 * runtime/relay/: what takes a written record to its destination. The stream publisher (publisher.ts, and the
 * batch it reads: stream-batch.ts, stream-candidates.ts, stream-source.ts), the keyless path (keyless-publish.ts,
 * keyless-outcomes.ts), the keyed path's claim, lanes and doorbell (claimed-delivery.ts, lane-delivery.ts,
 * keyed-doorbell.ts, fenced-partition.ts, unclaimable.ts), what both paths share (delivery.ts), the sweeper and its
 * cursor (sweeper.ts, sweep-scan.ts, sweep-cursor.ts, server-clock.ts), expiry (expiry-sweep.ts), and the two
 * Lambda entries the Outbox component ships (lambda.ts).
 *
 * May import: the runtime's root files, record/, store/, destination/ and observability/. Never writer/ nor
 * inbox/ (eslint.config.mjs).
 *
 * This file is the folder's map, not a barrel: it exports nothing and nothing imports it, and tsconfig.build.json
 * leaves it out of dist/. runtime/index.ts and the other modules import the files themselves, so a Lambda loads only
 * the modules it runs.
 */
