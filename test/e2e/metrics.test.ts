// --metrics-listen against a real daemon: after a few calls of each kind the
// scrape carries them (by RPC and code, latency, bytes), the process's own
// metrics, the search pool, the line index and the store; promtool (Debian's
// prometheus package, installed by .ci/run) accepts the whole exposition.
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/ports.js";
import { expectError, startDaemon, type Daemon } from "./daemon.js";

let d: Daemon;
let url: string;
/** A watch left open while the metrics are scraped. */
const watching = new AbortController();

beforeAll(async () => {
  const port = await freePort();
  url = `http://127.0.0.1:${port}/metrics`;
  d = await startDaemon({ args: ["--metrics-listen", `127.0.0.1:${port}`, "--workers", "2", "--quota-bytes", "1MiB"] });
  const ws = d.client.workspace("m");
  await d.client.createWorkspace("m");
  let live!: () => void;
  const isLive = new Promise<void>((resolve) => (live = resolve));
  const watch = ws.watch({ signal: watching.signal, onLive: () => live() });
  const firstChange = watch.next();
  await isLive;
  await ws.writeText("/a.txt", "alpha\nbeta\n".repeat(1000));
  await firstChange;
  await ws.readText("/a.txt", { startLine: 1500, lineCount: 10 });
  for await (const _ of ws.search("beta")) break;
  await expectError(ws.stat("/missing"), "NOT_FOUND");
  const run = await ws.startRun();
  await ws.finishRun(run.id);
});

afterAll(() => {
  watching.abort();
  return d?.stop();
});

/** The value of the sample `name{labels}` in the exposition (labels in any order), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...(match[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(match[3]);
  }
  return undefined;
}

describe("--metrics-listen", () => {
  let text: string;
  beforeAll(async () => {
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/plain");
    text = await response.text();
  });

  it("shows the fullest workspace's usage against the daemon's quota", () => {
    expect(sample(text, "filetools_quota_bytes_used_ratio")).toBeCloseTo(11_000 / 2 ** 20, 6);
    expect(sample(text, "filetools_quota_files_used_ratio")).toBe(0);
  });

  it("counts calls by RPC and code, with latency and bytes", () => {
    expect(sample(text, "filetools_calls_total", { method: "filetools.v1.Files/Read", code: "OK" })).toBe(1);
    expect(sample(text, "filetools_calls_total", { method: "filetools.v1.Files/Stat", code: "NOT_FOUND" })).toBe(1);
    // Left after its first result: OK or CANCELLED, whichever came first.
    expect(sample(text, "filetools_calls_total", { method: "filetools.v1.Files/Search" })).toBe(1);
    expect(sample(text, "filetools_call_duration_seconds_count", { method: "filetools.v1.Files/Write" })).toBe(1);
    expect(sample(text, "filetools_message_bytes_total", { method: "filetools.v1.Files/Write", direction: "in" })).toBeGreaterThan(11_000);
    expect(sample(text, "filetools_message_bytes_total", { method: "filetools.v1.Files/Read", direction: "out" })).toBeGreaterThan(50);
    expect(sample(text, "filetools_calls_in_flight", { method: "filetools.v1.Files/Read" })).toBe(0);
  });

  it("samples the search pool, the line index, the store and snapshots, and the process", () => {
    expect(sample(text, "filetools_search_pool_workers")).toBe(2);
    expect(sample(text, "filetools_search_pool_queued_tasks")).toBe(0);
    expect(sample(text, "filetools_line_index_files")).toBe(1);
    expect(sample(text, "filetools_line_index_bytes")).toBeGreaterThan(0);
    expect(sample(text, "filetools_leases_held")).toBe(0); // a file:// store has no leases
    expect(sample(text, "filetools_store_operations_total", { operation: "put", outcome: "ok" })).toBeGreaterThanOrEqual(2);
    expect(sample(text, "filetools_snapshot_duration_seconds_count", { kind: "snapshot" })).toBe(1);
    expect(sample(text, "filetools_snapshot_size_bytes_sum", { kind: "snapshot" })).toBeGreaterThan(0);
    expect(sample(text, "filetools_process_open_fds")).toBeGreaterThan(0);
    expect(sample(text, "filetools_process_resident_memory_bytes")).toBeGreaterThan(0);
  });

  it("counts watchers, the events sent to them and dropped, and the journal's bytes", () => {
    expect(sample(text, "filetools_watchers")).toBe(1);
    expect(sample(text, "filetools_watch_events_sent_total")).toBeGreaterThanOrEqual(1);
    expect(sample(text, "filetools_watch_events_dropped_total")).toBe(0);
    expect(sample(text, "filetools_journal_bytes")).toBeGreaterThan(0);
  });

  it("is valid Prometheus exposition (promtool check metrics)", () => {
    const promtool = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    expect(promtool.error, "promtool is not installed: apt-get install prometheus (.ci/run does)").toBeUndefined();
    expect({ status: promtool.status, output: promtool.stdout + promtool.stderr }).toEqual({ status: 0, output: "" });
  });

  it("answers 404 elsewhere, and is off unless asked for", async () => {
    expect((await fetch(url.replace("/metrics", "/other"))).status).toBe(404);
    expect(d.logs()).not.toMatch(/"level":"(error|fatal)"/);
  });
});
