package filetools

// W3C trace context on every call: the propagator the caller's process set
// (otel.SetTextMapPropagator) injects the context's span (traceparent,
// tracestate) into the call's metadata, so that the daemon's span of the
// call is its child. With OpenTelemetry's default propagator (which does
// nothing) or no span in the context, calls carry nothing more.

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// traceHeaders is ctx's trace context as headers; empty when there is none to send.
func traceHeaders(ctx context.Context) propagation.MapCarrier {
	headers := propagation.MapCarrier{}
	otel.GetTextMapPropagator().Inject(ctx, headers)
	return headers
}

// withTraceContext adds ctx's trace context to its outgoing metadata.
func withTraceContext(ctx context.Context) context.Context {
	headers := traceHeaders(ctx)
	pairs := make([]string, 0, 2*len(headers))
	for key, value := range headers {
		pairs = append(pairs, key, value)
	}
	if len(pairs) == 0 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, pairs...)
}

func traceUnary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return invoker(withTraceContext(ctx), method, req, reply, cc, opts...)
}

func traceStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return streamer(withTraceContext(ctx), desc, cc, method, opts...)
}
