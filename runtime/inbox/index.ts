/**
 * runtime/inbox/: the consumer's side. Applying a message's effect exactly once with an inbox marker
 * (inbox.ts, marker.ts), the SQS handler that does it for every record of a batch (handler.ts), the SQS event and
 * its check (sqs-event.ts, sqs-event-check.ts), and the formats a message reaches a queue in (delivery-formats.ts,
 * cloud-event-delivery.ts, json-span.ts).
 *
 * May import: the runtime's root files, record/, store/, observability/, claim-check/ (the consumer's
 * resolver) and destination/cloud-events.ts (the CloudEvent's names, which the relay writes and the inbox reads). Never writer/ nor relay/ (eslint.config.mjs).
 *
 * This file is the folder's map, not a barrel: it exports nothing and nothing imports it, and tsconfig.build.json
 * leaves it out of dist/. runtime/index.ts and the other modules import the files themselves, so a Lambda loads only
 * the modules it runs.
 */
