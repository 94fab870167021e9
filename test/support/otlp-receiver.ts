// The tests' OTLP/HTTP trace receiver (test/support/otlp_receiver.py, which
// decodes with the OpenTelemetry protos), run with the project's .venv: its
// URL, the spans received so far, and a wait for the spans a test expects.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { createInterface } from "node:readline";
import { ROOT } from "./dist.js";

export interface ReceivedSpan {
  trace_id: string;
  span_id: string;
  /** "" for a root span. */
  parent_span_id: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  /** OTLP's StatusCode: 0 unset, 1 ok, 2 error. */
  status_code: number;
  service: string;
  service_version: string;
  attributes: Record<string, string | number | boolean>;
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Bodies that did not decode as an ExportTraceServiceRequest. */
  readonly errors: string[] = [];

  private constructor(
    private readonly proc: ChildProcessWithoutNullStreams,
    readonly url: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    const proc = spawn(path.join(ROOT, ".venv/bin/python"), [path.join(ROOT, "test/support/otlp_receiver.py")]);
    const lines = createInterface({ input: proc.stdout });
    const [first] = (await once(lines, "line")) as [string];
    const url = /^listening on (http:\/\/\S+)$/.exec(first)?.[1];
    if (!url) throw new Error(`the OTLP receiver did not start: ${first}`);
    const receiver = new OtlpReceiver(proc, url);
    lines.on("line", (line) => {
      const record = JSON.parse(line) as ReceivedSpan | { error: string };
      if ("error" in record) receiver.errors.push(record.error);
      else receiver.spans.push(record);
    });
    return receiver;
  }

  /** Resolves with the spans once `found` holds of them (the daemon batches its spans: seconds, not milliseconds). */
  async waitFor<T>(found: (spans: ReceivedSpan[]) => T | undefined, timeoutMs = 30_000): Promise<T> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const result = found(this.spans);
      if (result !== undefined && result !== false) return result;
      if (Date.now() > until) throw new Error(`spans not received in ${timeoutMs} ms; got: ${this.spans.map((s) => s.name).join(", ")}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async stop(): Promise<void> {
    this.proc.stdin.end();
    if (this.proc.exitCode === null) await once(this.proc, "exit");
  }
}
