// Issue 13's mixed load: 64 agents at once, each with its own connection and
// its own managed workspace, looping over a realistic mix of calls (small
// Reads, windows into a 2 GB file, Writes, Edits, Stats, Lists, Searches,
// occasional Uploads, Downloads and StartRun/FinishRun pairs) for 60 s against
// one daemon. Prints per RPC calls, calls/s, p50, p99 and errors, the overall
// calls/s, and the daemon's peak RSS and CPU time. Part of `npm run bench`;
// alone: `npx tsx test/bench/mixed-load.ts [--seconds N] [--agents N]
// [--drivers N] [--launcher PATH] [--mix KIND=WEIGHT,…]`.
import { fork, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { BIG_FILE, BIG_LINES, ensureData } from "./data.js";
import { Daemon, ROOT, describeMachine, ensureBuilt, loadAverage, quantile, runTool } from "./measure.js";
import { formatMs, renderTable, type Row } from "./table.js";

// ---- what the parent and the drivers (clients/mixed_agents.ts) share ----------

/** The call kinds, with their weight in the mix (per 1,000 picks). */
export const DEFAULT_MIX: [kind: string, weight: number][] = [
  ["Read (small file)", 300],
  ["Read (window of a large file)", 120],
  ["Write", 100],
  ["Edit", 100],
  ["Stat", 160],
  ["List", 60],
  ["Search", 120],
  ["Upload", 15],
  ["Download", 15],
  ["StartRun + FinishRun", 10],
];

/** What the parent sends first (then "go", then "stop"). */
export interface DriverJob {
  address: string;
  /** The agents this process drives: their numbers (workspace `agent-NN`, PRNG seed). */
  agents: number[];
  /** The bound workspace holding the large file, and its line count. */
  corpus: { workspace: string; path: string; lines: number };
  /** A directory of this driver's own (upload source, download targets). */
  scratch: string;
  /** Weights replacing the default mix's (call kind → weight; kinds left out are not called), to look at one kind alone. */
  mix?: Record<string, number>;
}

export interface DriverResult {
  /** Per call kind, each call's wall time in ms (errors excluded). */
  samples: Record<string, number[]>;
  errors: Record<string, number>;
  /** The first few error messages, to say what failed. */
  errorExamples: string[];
  /** This process's CPU time during the timed loop, in ms (user + system). */
  cpuMs: number;
  /** From "go" until the last call in flight at "stop" ended. */
  seconds: number;
}

export type DriverMessage = { type: "ready" } | { type: "result"; result: DriverResult } | { type: "failed"; error: string };

// ---- the parent ---------------------------------------------------------------

export interface MixedLoadOptions {
  seconds: number;
  agents: number;
  /** Processes the agents are spread over. */
  drivers: number;
  /** Another build's bin/filetoolsd (for before/after comparisons); default this checkout's. */
  launcher?: string;
  /** In place of the default mix: call kind → weight (see DEFAULT_MIX). */
  mix?: Record<string, number>;
}

/**
 * Two driver processes by default: the TypeScript client costs more CPU per
 * call than the daemon does (see Clients in README.md), so one process would
 * bound the load at what one core of client can send; more than the cores
 * only adds switching.
 */
export const MIXED_LOAD_DEFAULTS: MixedLoadOptions = { seconds: 60, agents: 64, drivers: 2 };

interface KindFigures {
  kind: string;
  calls: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
}

export interface MixedLoadReport {
  options: MixedLoadOptions;
  seconds: number;
  kinds: KindFigures[];
  calls: number;
  errors: number;
  errorExamples: string[];
  idleRss: number;
  /** After the set-up (64 workspaces with their files, the large file's index built), before the timed loop. */
  readyRss: number;
  peakRss: number;
  endRss: number;
  /** VmRSS every 5 s of the timed loop. */
  rssTimeline: number[];
  daemonCpuMs: number;
  driverCpuMs: number;
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const DRIVER = path.join(ROOT, "test/bench/clients/mixed_agents.ts");

class DriverProcess {
  private readonly messages: DriverMessage[] = [];
  private waiting: ((m: DriverMessage) => void) | undefined;
  private exitError: Error | undefined;

  constructor(readonly child: ChildProcess) {
    child.on("message", (m: DriverMessage) => {
      if (this.waiting) this.waiting(m);
      else this.messages.push(m);
    });
    child.on("exit", (code) => {
      if (code) this.exitError = new Error(`mixed-load driver exited ${code}`);
      this.waiting?.({ type: "failed", error: this.exitError?.message ?? "mixed-load driver exited" });
    });
  }

  static start(job: DriverJob): DriverProcess {
    const child = fork(DRIVER, [], { cwd: ROOT, execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
    child.send(job);
    return new DriverProcess(child);
  }

  async next<T extends DriverMessage["type"]>(type: T): Promise<Extract<DriverMessage, { type: T }>> {
    const m = this.messages.shift() ?? (await new Promise<DriverMessage>((resolve) => (this.waiting = resolve)));
    this.waiting = undefined;
    if (m.type === "failed") throw new Error(`mixed-load driver failed: ${m.error}`);
    if (m.type !== type) throw new Error(`mixed-load driver: expected ${type}, got ${m.type}`);
    return m as Extract<DriverMessage, { type: T }>;
  }
}

/** Runs the load once against a fresh daemon and measures it. */
export async function mixedLoad(dataRoot: string, options: MixedLoadOptions, log: (line: string) => void): Promise<MixedLoadReport> {
  const bigDir = path.join(dataRoot, "big");
  log(`mixed load: ${options.agents} agents over ${options.drivers} driver processes, ${options.seconds} s …`);
  await runTool(`cat '${path.join(bigDir, BIG_FILE)}' > /dev/null`); // warm page cache, as for the other benchmarks
  // As deployed: info logging (one line per call).
  const daemon = await Daemon.start({ corpus: bigDir }, ["--log-level", "info"], options.launcher);
  const scratch = mkdtempSync(path.join(os.tmpdir(), "ftd-mixed-"));
  const drivers: DriverProcess[] = [];
  try {
    const idleRss = daemon.rss();
    // The large file's line index, built once as the agents' earlier reads would have (the cold scan is the
    // window benchmark's business): a window near its end.
    for await (const _ of daemon.client.files.read({ workspace: "corpus", path: BIG_FILE, startLine: BigInt(BIG_LINES - 10), lineCount: 1n }));
    for (let d = 0; d < options.drivers; d++) {
      const agents = Array.from({ length: options.agents }, (_, i) => i).filter((i) => i % options.drivers === d);
      const job: DriverJob = {
        address: daemon.address,
        agents,
        corpus: { workspace: "corpus", path: BIG_FILE, lines: BIG_LINES },
        scratch: path.join(scratch, `driver-${d}`),
        mix: options.mix,
      };
      drivers.push(DriverProcess.start(job));
    }
    for (const d of drivers) await d.next("ready");
    const readyRss = daemon.rss();
    const cpuBefore = daemon.cpuMs();
    const rssTimeline: number[] = [];
    const sampler = setInterval(() => rssTimeline.push(daemon.rss()), 5000);
    const { result: results, peak } = await daemon.peakDuring(async () => {
      for (const d of drivers) d.child.send("go");
      await new Promise((resolve) => setTimeout(resolve, options.seconds * 1000));
      for (const d of drivers) d.child.send("stop");
      return Promise.all(drivers.map(async (d) => (await d.next("result")).result));
    });
    clearInterval(sampler);
    const daemonCpuMs = daemon.cpuMs() - cpuBefore;
    return { options, ...summarise(results), idleRss, readyRss, peakRss: peak, endRss: daemon.rss(), rssTimeline, daemonCpuMs };
  } finally {
    for (const d of drivers) if (d.child.exitCode === null) d.child.kill();
    await daemon.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

function summarise(results: DriverResult[]): Pick<MixedLoadReport, "seconds" | "kinds" | "calls" | "errors" | "errorExamples" | "driverCpuMs"> {
  const seconds = Math.max(...results.map((r) => r.seconds));
  const kinds = Object.keys(results[0]!.samples).map((kind): KindFigures => {
    const samples = results.flatMap((r) => r.samples[kind]!);
    const errors = results.reduce((sum, r) => sum + r.errors[kind]!, 0);
    return {
      kind,
      calls: samples.length,
      perSecond: samples.length / seconds,
      p50: samples.length ? quantile(samples, 0.5) : NaN,
      p99: samples.length ? quantile(samples, 0.99) : NaN,
      max: samples.length ? Math.max(...samples) : NaN,
      errors,
    };
  });
  return {
    seconds,
    kinds,
    calls: kinds.reduce((sum, k) => sum + k.calls, 0),
    errors: kinds.reduce((sum, k) => sum + k.errors, 0),
    errorExamples: results.flatMap((r) => r.errorExamples).slice(0, 5),
    driverCpuMs: results.reduce((sum, r) => sum + r.cpuMs, 0),
  };
}

/** The call kinds of the mix (all but those a --mix left out). */
const called = (report: MixedLoadReport) => report.kinds.filter((k) => k.calls + k.errors > 0);

/** The per-RPC table and the overall lines. */
export function formatMixedLoad(report: MixedLoadReport): string[] {
  const { options: o } = report;
  const header = ["call", "calls", "calls/s", "p50", "p99", "max", "errors"];
  const body = called(report).map((k) => [
    k.kind,
    k.calls.toLocaleString("en"),
    k.perSecond.toFixed(1),
    ...[k.p50, k.p99, k.max].map((v) => (Number.isNaN(v) ? "–" : formatMs(v))),
    String(k.errors),
  ]);
  body.push(["all", report.calls.toLocaleString("en"), (report.calls / report.seconds).toFixed(0), "", "", "", String(report.errors)]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
  const cores = (cpuMs: number) => (cpuMs / (report.seconds * 1000)).toFixed(2);
  return [
    `mixed load: ${o.agents} agents (one connection and one managed workspace each) over ${o.drivers} driver processes, ${report.seconds.toFixed(1)} s`,
    "",
    line(header),
    `|${widths.map((w, i) => (i === 0 ? "-".repeat(w + 2) : "-".repeat(w + 1) + ":")).join("|")}|`,
    ...body.map(line),
    "",
    `daemon RSS: idle ${mib(report.idleRss)}, set up ${mib(report.readyRss)}, peak ${mib(report.peakRss)}, at the end ${mib(report.endRss)}; every 5 s: ${report.rssTimeline.map((r) => (r / 2 ** 20).toFixed(0)).join(" ")} MiB`,
    `CPU over the timed loop: daemon ${(report.daemonCpuMs / 1000).toFixed(1)} s (${cores(report.daemonCpuMs)} cores, ${(report.daemonCpuMs / report.calls).toFixed(2)} ms/call), drivers ${(report.driverCpuMs / 1000).toFixed(1)} s (${cores(report.driverCpuMs)} cores)`,
    ...report.errorExamples.map((e) => `error: ${e}`),
  ];
}

/** Rows for run.ts's table: the overall rate with the peak RSS, then each call's p99. */
export function mixedLoadRows(report: MixedLoadReport): Row[] {
  const name = `${report.options.agents} agents, mixed calls, ${report.options.seconds} s`;
  return [
    {
      name: `${name}: all calls`,
      daemon: `${Math.round(report.calls / report.seconds).toLocaleString("en")} calls/s`,
      tools: [],
      peakRss: report.peakRss,
      note: `${report.calls.toLocaleString("en")} calls, ${report.errors} errors; daemon CPU ${(report.daemonCpuMs / report.calls).toFixed(2)} ms/call; target peak RSS < 200 MiB`,
    },
    ...called(report).map((k) => ({
      name: `${name}: ${k.kind}, p99`,
      daemon: Number.isNaN(k.p99) ? "no call succeeded" : k.p99,
      tools: [],
      note: `p50 ${Number.isNaN(k.p50) ? "–" : formatMs(k.p50)}; ${k.perSecond.toFixed(1)} calls/s; ${k.errors} errors`,
    })),
  ];
}

/** For `npm run bench`: one run with the defaults, its per-RPC table logged, its rows returned. */
export async function mixedLoadBenchmark(dataRoot: string, log: (line: string) => void): Promise<Row[]> {
  const report = await mixedLoad(dataRoot, MIXED_LOAD_DEFAULTS, log);
  for (const line of formatMixedLoad(report)) log(line);
  return mixedLoadRows(report);
}

/** "Search=1,Stat=2" → {Search: 1, Stat: 2}; the names are DEFAULT_MIX's. */
function parseMix(text: string): Record<string, number> {
  const known = new Set(DEFAULT_MIX.map(([kind]) => kind));
  const mix: Record<string, number> = {};
  for (const part of text.split(",")) {
    const at = part.lastIndexOf("=");
    const kind = part.slice(0, at).trim();
    const weight = Number(part.slice(at + 1));
    if (at < 0 || !known.has(kind) || !Number.isInteger(weight) || weight < 0) {
      throw new Error(`--mix ${text}: expected KIND=WEIGHT,… with KIND one of ${[...known].join(", ")}`);
    }
    mix[kind] = weight;
  }
  return mix;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: "string" },
      agents: { type: "string" },
      drivers: { type: "string" },
      launcher: { type: "string" },
      mix: { type: "string" },
    },
  });
  const number = (value: string | undefined, fallback: number) => {
    const n = value === undefined ? fallback : Number(value);
    if (!Number.isInteger(n) || n < 1) throw new Error(`expected a positive whole number, got ${value}`);
    return n;
  };
  const options: MixedLoadOptions = {
    seconds: number(values.seconds, MIXED_LOAD_DEFAULTS.seconds),
    agents: number(values.agents, MIXED_LOAD_DEFAULTS.agents),
    drivers: number(values.drivers, MIXED_LOAD_DEFAULTS.drivers),
    launcher: values.launcher && path.resolve(values.launcher),
    mix: values.mix === undefined ? undefined : parseMix(values.mix),
  };
  const log = (line: string) => console.log(line);
  const data = path.resolve(process.env.BENCH_DATA ?? path.join(os.homedir(), ".cache", "filetools-bench"));
  ensureBuilt(log);
  ensureData(data, log);
  for (const line of describeMachine(data)) log(line);
  const report = await mixedLoad(data, options, log);
  log("");
  for (const line of formatMixedLoad(report)) log(line);
  log("");
  log(renderTable(mixedLoadRows(report)));
  log(`\nload average at the end: ${loadAverage()}`);
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
