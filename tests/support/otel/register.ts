/**
 * OpenTelemetry as the ADOT Lambda layer or Node auto-instrumentation sets it up in a process, before the process
 * loads anything else: the SDK's tracer provider (an in-memory exporter here), the async-hooks context manager, the
 * W3C trace context propagator, and the real AWS instrumentations the job names, with the job's settings. Imported
 * first by `instrumented-process.ts`, so the instrumentations hook `@aws-sdk`/`@smithy` and the Lambda handler's
 * file before they load: registered later, they would patch nothing.
 *
 * @packageDocumentation
 */
import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { registerInstrumentations, type Instrumentation } from "@opentelemetry/instrumentation";
import { AwsLambdaInstrumentation } from "@opentelemetry/instrumentation-aws-lambda";
import { AwsInstrumentation } from "@opentelemetry/instrumentation-aws-sdk";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { readJob } from "./job";

const job = readJob();

/** Every span the process ended. */
export const exporter = new InMemorySpanExporter();

/** The process's tracer provider (flush it before reading {@link exporter}). */
export const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });

trace.setGlobalTracerProvider(provider);
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());

const instrumentations: Instrumentation[] = [];
if (job.instrument.awsSdk !== undefined) instrumentations.push(new AwsInstrumentation(job.instrument.awsSdk));
if (job.instrument.awsLambda !== undefined)
    instrumentations.push(new AwsLambdaInstrumentation(job.instrument.awsLambda));
registerInstrumentations({ instrumentations, tracerProvider: provider });
