// OpenTelemetry traces, off unless --otlp-endpoint is given: a span per call
// (server/grpc/call.ts), child spans for store operations (tracedStore) and
// search batches (server/search/pool.ts), exported over OTLP/HTTP with
// protobuf bodies. A call's span is the child of the caller's W3C trace
// context (`traceparent`, `tracestate` in the call's metadata). Off, every
// span is the API's no-op one: nothing is recorded or sent.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace, type Attributes, type Context, type Span, type TextMapGetter } from "@opentelemetry/api";
import type { Metadata } from "@grpc/grpc-js";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";

/** The daemon's tracer: the API's no-op one until startTracing registers a provider. */
const tracer = trace.getTracer("filetoolsd");

/**
 * Exports spans to the OTLP/HTTP collector at `endpoint` (its base URL, as
 * OTEL_EXPORTER_OTLP_ENDPOINT: spans go to ENDPOINT/v1/traces). Returns what
 * flushes the spans not yet sent and stops exporting (at shutdown).
 */
export function startTracing(endpoint: string, version: string): () => Promise<void> {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: "filetoolsd", [ATTR_SERVICE_VERSION]: version }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, "")}/v1/traces` }))],
  });
  // The daemon is a process of its own: a global provider, context manager (AsyncLocalStorage) and propagator.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return () => provider.shutdown();
}

const metadataGetter: TextMapGetter<Metadata> = {
  keys: (metadata) => Object.keys(metadata.getMap()),
  get: (metadata, key) => {
    const values = metadata.get(key).map(String);
    return values.length === 0 ? undefined : values;
  },
};

/** A call's span, the child of the trace context its metadata carries; `context` is what its work runs in. */
export function startCallSpan(name: string, metadata: Metadata, attributes: Attributes): { span: Span; context: Context } {
  const parent = propagation.extract(ROOT_CONTEXT, metadata, metadataGetter);
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Runs `work` as a child span `name` of the active span; the span records a failure as an error. */
export async function inSpan<T>(name: string, attributes: Attributes, work: () => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, async (span) => {
    try {
      return await work();
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Runs `work` (and what it starts) inside `ctx`, so that spans started there are its children. */
export function within<T>(ctx: Context, work: () => T): T {
  return context.with(ctx, work);
}
