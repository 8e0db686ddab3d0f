/**
 * runtime/observability/: metrics, logs and traces. The metric names and units (metric-catalog.ts) and their
 * CloudWatch embedded metric format (emf.ts), the JSON logger of the Lambda handlers (json-logger.ts), the W3C
 * trace context a message carries (trace-context.ts) and the optional OpenTelemetry spans (open-telemetry.ts).
 *
 * May import: the runtime's root files only (eslint.config.mjs).
 *
 * This file is the folder's map, not a barrel: it exports nothing and nothing imports it, and tsconfig.build.json
 * leaves it out of dist/. runtime/index.ts and the other modules import the files themselves, so a Lambda loads only
 * the modules it runs.
 */
