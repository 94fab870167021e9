// --otlp-endpoint against a real daemon and a real OTLP/HTTP receiver (the
// OpenTelemetry protos decode what it gets): the TypeScript client, inside a
// span of the caller's, sends its W3C trace context; the daemon's span of each
// call is that span's child, store operations and search batches are children
// of the call, failures and cancellations end their spans with their codes.
// Bad trace context never fails a call; without the flag nothing is sent.
import { context, trace, type Span } from "@opentelemetry/api";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OtlpReceiver, type ReceivedSpan } from "../support/otlp-receiver.js";
import { expectError, startDaemon, type Daemon } from "./daemon.js";

let receiver: OtlpReceiver;
let d: Daemon;
// The caller's side: an SDK with the W3C propagator and an AsyncLocalStorage context, as an agent framework sets up.
const provider = new NodeTracerProvider();
provider.register();
const tracer = trace.getTracer("traces.test");

beforeAll(async () => {
  receiver = await OtlpReceiver.start();
  // The SDK's batch delay (5 s by default), through its standard variable, which the daemon inherits.
  process.env.OTEL_BSP_SCHEDULE_DELAY = "100";
  d = await startDaemon({ args: ["--otlp-endpoint", receiver.url, "--workers", "2"] });
  await d.client.createWorkspace("t");
});

afterAll(async () => {
  await d?.stop();
  await receiver?.stop();
  await provider.shutdown();
});

/** Runs `work` inside a fresh span of the caller's; returns that span once ended. */
async function inCallerSpan(name: string, work: () => Promise<unknown>): Promise<Span> {
  return tracer.startActiveSpan(name, async (span) => {
    try {
      await work();
    } finally {
      span.end();
    }
    return span;
  });
}

/** The daemon's server span of `method` whose parent is `parent` (the caller's span). */
function callSpanUnder(parent: Span, method: string): (spans: ReceivedSpan[]) => ReceivedSpan | undefined {
  const { traceId, spanId } = parent.spanContext();
  return (spans) => spans.find((s) => s.name === method && s.parent_span_id === spanId && s.trace_id === traceId);
}

/** True when `span` descends from the span `ancestorId` among `spans`. */
function descendsFrom(spans: ReceivedSpan[], span: ReceivedSpan, ancestorId: string): boolean {
  for (let at: ReceivedSpan | undefined = span; at; at = spans.find((s) => s.span_id === at!.parent_span_id)) {
    if (at.parent_span_id === ancestorId) return true;
  }
  return false;
}

describe("traces", () => {
  it("makes a call's span the child of the caller's span, with the RPC's attributes", async () => {
    const ws = d.client.workspace("t");
    const caller = await inCallerSpan("agent.write", () => ws.writeText("/notes/a.txt", "hello\n"));
    const span = await receiver.waitFor(callSpanUnder(caller, "filetools.v1.Files/Write"));
    expect(span).toMatchObject({
      kind: 2,
      status_code: 0,
      service: "filetoolsd",
      attributes: {
        "rpc.system": "grpc",
        "rpc.service": "filetools.v1.Files",
        "rpc.method": "Write",
        "rpc.grpc.status_code": 0,
        "filetools.workspace": "t",
      },
    });
    expect(span.attributes["filetools.bytes_sent"]).toBeGreaterThan(0);
    expect(receiver.errors).toEqual([]);
  });

  it("gives a search a child span per worker batch", async () => {
    const ws = d.client.workspace("t");
    for (let i = 0; i < 20; i++) await ws.writeText(`/src/f${i}.txt`, `line ${i}\nneedle\n`);
    const caller = await inCallerSpan("agent.search", async () => {
      for await (const _ of ws.search("needle")) void _;
    });
    const search = await receiver.waitFor(callSpanUnder(caller, "filetools.v1.Files/Search"));
    const batches = await receiver.waitFor((spans) => {
      const found = spans.filter((s) => s.name === "search.batch" && s.parent_span_id === search.span_id);
      return found.length > 0 ? found : undefined;
    });
    expect(batches.every((b) => b.trace_id === caller.spanContext().traceId)).toBe(true);
    expect(batches.reduce((n, b) => n + Number(b.attributes["filetools.search.files"]), 0)).toBeGreaterThanOrEqual(20);
  });

  it("gives FinishRun's store operations spans under the call's", async () => {
    const ws = d.client.workspace("t");
    const run = await ws.startRun();
    await ws.writeText("/out.txt", "result\n");
    const caller = await inCallerSpan("agent.finish", () => ws.finishRun(run.id));
    const finish = await receiver.waitFor(callSpanUnder(caller, "filetools.v1.Workspaces/FinishRun"));
    const puts = await receiver.waitFor((spans) => {
      const found = spans.filter((s) => s.name === "store.put" && descendsFrom(spans, s, finish.span_id));
      return found.length > 0 ? found : undefined;
    });
    expect(puts[0]).toMatchObject({ trace_id: caller.spanContext().traceId, attributes: { "filetools.store.operation": "put" } });
  });

  it("ends a failed call's span as an error with its gRPC code", async () => {
    const ws = d.client.workspace("t");
    const caller = await inCallerSpan("agent.stat", () => expectError(ws.stat("/missing"), "NOT_FOUND"));
    const span = await receiver.waitFor(callSpanUnder(caller, "filetools.v1.Files/Stat"));
    expect(span.status_code).toBe(2);
    expect(span.attributes["rpc.grpc.status_code"]).toBe(5);
  });

  it("ends a cancelled call's span (CANCELLED)", async () => {
    const ws = d.client.workspace("t");
    await ws.writeText("/big.txt", "0123456789abcdef\n".repeat(400_000));
    const abort = new AbortController();
    const caller = await inCallerSpan("agent.read", async () => {
      const read = d.client.files.read({ workspace: "t", path: "/big.txt" }, { signal: abort.signal });
      await expect(
        (async () => {
          for await (const _ of read) abort.abort();
        })(),
      ).rejects.toThrow();
    });
    const span = await receiver.waitFor(callSpanUnder(caller, "filetools.v1.Files/Read"));
    expect(span.attributes["rpc.grpc.status_code"]).toBe(1);
  });

  // The class: trace context a client got wrong. The call is served as if it had none: a new trace, never a failure.
  it.each([
    ["not W3C at all", "garbage"],
    ["an all-zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"],
    ["an all-zero span id", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"],
    ["version ff", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"],
    ["upper-case hex", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01"],
    ["a short trace id", "00-4bf92f35-00f067aa0ba902b7-01"],
    ["8 KiB of it", `00-${"a".repeat(8192)}-00f067aa0ba902b7-01`],
  ])("serves a call whose traceparent is %s, as the root of a new trace", async (_, traceparent) => {
    const workspace = `tp-${Math.random().toString(36).slice(2, 10)}`;
    await d.client.createWorkspace(workspace);
    // Outside any span of ours, so the client adds nothing: the header is the one given.
    const listed = await context.with(context.active(), () =>
      d.client.files.stat({ workspace, path: "/" }, { metadata: { traceparent, tracestate: "k=v" } }),
    );
    expect(listed.file?.type).toBeDefined();
    const span = await receiver.waitFor((spans) => spans.find((s) => s.name === "filetools.v1.Files/Stat" && s.attributes["filetools.workspace"] === workspace));
    expect(span.parent_span_id).toBe("");
    expect(span.trace_id).not.toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(span.attributes["rpc.grpc.status_code"]).toBe(0);
  });

  it("sends nothing without --otlp-endpoint, even with the SDK's OTEL_ variables set", async () => {
    const quiet = await OtlpReceiver.start();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = quiet.url;
    process.env.OTEL_TRACES_EXPORTER = "otlp";
    try {
      const plain = await startDaemon();
      await plain.client.createWorkspace("q");
      await inCallerSpan("agent.quiet", () => plain.client.workspace("q").writeText("/a.txt", "a\n"));
      // SIGTERM flushes whatever a tracing daemon batched: after it, nothing more can come.
      await plain.stop();
    } finally {
      delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
      delete process.env.OTEL_TRACES_EXPORTER;
    }
    expect(quiet.spans).toEqual([]);
    expect(quiet.errors).toEqual([]);
    await quiet.stop();
  });
});
