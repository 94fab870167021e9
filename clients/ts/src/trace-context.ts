// W3C trace context on every call, when the caller's process has the
// OpenTelemetry API (@opentelemetry/api, an optional peer dependency): the
// active context goes into the call's metadata (traceparent, tracestate)
// through the propagator the caller registered, so that the daemon's span of
// the call is a child of the caller's span. Without the API, a propagator or
// an active span, calls carry nothing more.
import { createRequire } from "node:module";
import * as grpc from "@grpc/grpc-js";

type OpenTelemetryApi = typeof import("@opentelemetry/api");

const otel = ((): OpenTelemetryApi | undefined => {
  try {
    return createRequire(import.meta.url)("@opentelemetry/api") as OpenTelemetryApi;
  } catch {
    return undefined;
  }
})();

/** The caller's current trace context as headers; empty when there is none to send. */
export function traceHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  otel?.propagation.inject(otel.context.active(), headers);
  return headers;
}

/**
 * `options` with the current trace context added to its metadata (headers the
 * call sets itself win). A call with metadata of its own goes on a stream of
 * its own, never the shared Multiplex stream, whose metadata is its opener's.
 */
export function withTraceContext<O extends { metadata?: grpc.Metadata | Record<string, string> }>(options: O): O {
  const headers = traceHeaders();
  if (Object.keys(headers).length === 0) return options;
  if (options.metadata instanceof grpc.Metadata) {
    const metadata = options.metadata.clone();
    for (const [key, value] of Object.entries(headers)) if (metadata.get(key).length === 0) metadata.set(key, value);
    return { ...options, metadata };
  }
  return { ...options, metadata: { ...headers, ...options.metadata } };
}
