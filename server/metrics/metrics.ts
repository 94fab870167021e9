// Prometheus metrics (--metrics-listen, off by default): calls by RPC and
// code, their latency, bytes to and from clients, calls in flight, the search
// pool, the line index, the snapshot store, run leases, quota usage, watchers and the journal, and the process's own (open
// descriptors, memory, event loop). prom-client keeps the numbers; the
// daemon's modules report through the narrow interfaces below and know
// nothing of Prometheus.
import { createServer, type Server } from "node:http";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** What the gRPC adapter reports of each call. */
export interface CallMetrics {
  /** A call started; the returned function records how it ended. */
  started(method: string): (code: string) => void;
  /** Bytes of a request received (`in`) or a response sent (`out`). */
  bytes(method: string, direction: "in" | "out", count: number): void;
}

/** What the snapshot store and the snapshots module report. */
export interface StoreMetrics {
  /** A store operation ended ("ok" or the error's reason). */
  storeOperation(operation: string, outcome: string): void;
  /** A snapshot was packed and stored, or one was restored: how long it took and its tarball's size. */
  snapshot(kind: "snapshot" | "restore", seconds: number, bytes: number): void;
}

/** What the run leases and the runs report. */
export interface LeaseMetrics {
  /** A lease operation (acquire, resume, renew, release, abandon) and its result (ok, refused, taken_over, lost, error). */
  lease(operation: string, result: string): void;
  /** A snapshot kept off the main line, by why (refused, lease_lost, abandoned, unpublished_changes, run_ended_at_restart). */
  recovered(why: string): void;
}

/** Gauges read when scraped. */
export interface Sampled {
  searchPool(): { queued: number; busy: number; threads: number };
  lineIndex(): { bytes: number; files: number };
  /** Run leases held on an s3:// store (0 without leases). */
  leases(): number;
  /** The fullest workspace's usage as a fraction of the daemon's quota (0 without one). */
  quotaUsage(): { bytes: number; files: number };
  /** The journal: watchers open, bytes on disk, events sent to watchers and dropped for slow ones (since start-up). */
  journal(): { watchers: number; bytes: number; sent: number; dropped: number };
}

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const SNAPSHOT_SECONDS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300];
const SNAPSHOT_BYTES = [1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10];

export class DaemonMetrics implements CallMetrics, StoreMetrics, LeaseMetrics {
  readonly registry = new Registry();
  private readonly calls = new Counter({ name: "filetools_calls_total", help: "Calls that ended, by RPC and status code.", labelNames: ["method", "code"], registers: [this.registry] });
  private readonly latency = new Histogram({ name: "filetools_call_duration_seconds", help: "Time from a call's start to its status, by RPC.", labelNames: ["method"], buckets: LATENCY_BUCKETS, registers: [this.registry] });
  private readonly inFlight = new Gauge({ name: "filetools_calls_in_flight", help: "Calls (and streams) in flight, by RPC.", labelNames: ["method"], registers: [this.registry] });
  private readonly transferred = new Counter({ name: "filetools_message_bytes_total", help: "Bytes of messages received from clients (in) and sent to them (out), by RPC.", labelNames: ["method", "direction"], registers: [this.registry] });
  private readonly storeOperations = new Counter({ name: "filetools_store_operations_total", help: "Snapshot store operations, by operation and outcome (ok or the error's reason).", labelNames: ["operation", "outcome"], registers: [this.registry] });
  private readonly snapshotSeconds = new Histogram({ name: "filetools_snapshot_duration_seconds", help: "Time to pack and store a snapshot, or to restore one.", labelNames: ["kind"], buckets: SNAPSHOT_SECONDS, registers: [this.registry] });
  private readonly leaseOperations = new Counter({ name: "filetools_lease_operations_total", help: "Run lease operations (acquire, resume, renew, release, abandon), by result (ok, refused, taken_over, lost, error).", labelNames: ["operation", "result"], registers: [this.registry] });
  private readonly recoveredSnapshots = new Counter({ name: "filetools_recovered_snapshots_total", help: "Snapshots kept off the main line (work that could not be published), by why.", labelNames: ["why"], registers: [this.registry] });
  private readonly snapshotBytes = new Histogram({ name: "filetools_snapshot_size_bytes", help: "Tarball size of the snapshots stored and restored.", labelNames: ["kind"], buckets: SNAPSHOT_BYTES, registers: [this.registry] });

  /** Where the sampled gauges read from, once the daemon's parts exist (see sample). */
  private sampled: Sampled | undefined;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "filetools_" });
    // Gauges named like counters, which promtool's lint rejects (and nobody alerts on).
    for (const name of ["active_handles_total", "active_requests_total", "active_resources_total"]) this.registry.removeSingleMetric(`filetools_nodejs_${name}`);
    const registers = [this.registry];
    const read = (value: (sampled: Sampled) => number) => () => (this.sampled ? value(this.sampled) : 0);
    // prom-client calls collect() on each scrape, with the gauge as `this`.
    const gauge = (name: string, help: string, value: () => number) =>
      new Gauge({ name, help, registers, collect(this: Gauge) {
        this.set(value());
      } });
    gauge("filetools_search_pool_queued_tasks", "Search batches waiting for a worker.", read((s) => s.searchPool().queued));
    gauge("filetools_search_pool_busy_workers", "Search workers running a batch.", read((s) => s.searchPool().busy));
    gauge("filetools_search_pool_workers", "Search worker threads.", read((s) => s.searchPool().threads));
    gauge("filetools_line_index_bytes", "Memory held by the line index's checkpoints.", read((s) => s.lineIndex().bytes));
    gauge("filetools_line_index_files", "Files the line index holds checkpoints for.", read((s) => s.lineIndex().files));
    gauge("filetools_leases_held", "Run leases this daemon holds on an s3:// store.", read((s) => s.leases()));
    gauge("filetools_quota_bytes_used_ratio", "The fullest workspace's bytes over --quota-bytes (0 without it); workspaces counted since start-up.", read((s) => s.quotaUsage().bytes));
    gauge("filetools_watchers", "Watch streams open.", read((s) => s.journal().watchers));
    gauge("filetools_journal_bytes", "Bytes of the workspaces' journals on disk (those opened since start-up).", read((s) => s.journal().bytes));
    // Counted by the journal; read when scraped.
    const counter = (name: string, help: string, value: () => number) =>
      new Counter({ name, help, registers, collect(this: Counter) {
        this.reset();
        this.inc(value());
      } });
    counter("filetools_watch_events_sent_total", "Journal entries sent to watchers.", read((s) => s.journal().sent));
    counter("filetools_watch_events_dropped_total", "Journal entries dropped for watchers that read too slowly (each told how many it missed).", read((s) => s.journal().dropped));
    gauge("filetools_quota_files_used_ratio", "The fullest workspace's entries over --quota-files (0 without it); workspaces counted since start-up.", read((s) => s.quotaUsage().files));
  }

  /** The parts the sampled gauges read (the search pool, the line index), once they exist. */
  sample(sampled: Sampled): void {
    this.sampled = sampled;
  }

  started(method: string): (code: string) => void {
    const stopTimer = this.latency.startTimer({ method });
    this.inFlight.inc({ method });
    return (code) => {
      stopTimer();
      this.inFlight.dec({ method });
      this.calls.inc({ method, code });
    };
  }

  bytes(method: string, direction: "in" | "out", count: number): void {
    this.transferred.inc({ method, direction }, count);
  }

  storeOperation(operation: string, outcome: string): void {
    this.storeOperations.inc({ operation, outcome });
  }

  lease(operation: string, result: string): void {
    this.leaseOperations.inc({ operation, result });
  }

  recovered(why: string): void {
    this.recoveredSnapshots.inc({ why });
  }

  snapshot(kind: "snapshot" | "restore", seconds: number, bytes: number): void {
    this.snapshotSeconds.observe({ kind }, seconds);
    this.snapshotBytes.observe({ kind }, bytes);
  }

  /** Serves GET /metrics in the Prometheus text format; resolves with the address once listening. */
  async listen(host: string, port: number): Promise<{ url: string; server: Server }> {
    const server = createServer((req, res) => {
      if (req.method !== "GET" || req.url?.split("?")[0] !== "/metrics") return void res.writeHead(404).end("the metrics are at /metrics\n");
      this.registry.metrics().then(
        (text) => res.writeHead(200, { "content-type": this.registry.contentType }).end(text),
        (error: unknown) => res.writeHead(500).end(`${String(error)}\n`),
      );
    });
    await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, host, resolve));
    const address = server.address();
    const bound = typeof address === "object" && address ? address.port : port;
    return { url: `http://${host.includes(":") ? `[${host}]` : host}:${bound}/metrics`, server };
  }
}
