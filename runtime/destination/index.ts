/**
 * runtime/destination/: where the relay sends. What every destination kind offers the relay (destination.ts), the
 * three kinds (sns.ts, sqs.ts, eventbridge.ts) and how one is chosen (kind.ts, create.ts), the EventBridge detail
 * (event-detail.ts), the opt-in CloudEvents body (cloud-events.ts), the attributes a destination keeps (own-attributes.ts), the event bus check (bus-check.ts),
 * and the shapes of the AWS names the handlers are given (aws-resource-names.ts).
 *
 * May import: the runtime's root files, record/ and store/. Never writer/, relay/, inbox/ nor claim-check/
 * (eslint.config.mjs).
 *
 * This file is the folder's map, not a barrel: it exports nothing and nothing imports it, and tsconfig.build.json
 * leaves it out of dist/. runtime/index.ts and the other modules import the files themselves, so a Lambda loads only
 * the modules it runs.
 */
