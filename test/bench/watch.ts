// `npm run bench:watch`: issue 28's row. One daemon (bin/filetoolsd, as
// deployed), a managed workspace, the TypeScript client:
//   - the time from a Write's answer to a watcher's event of it, p50 and p99
//     over 10,000 sequential Writes (both clients in this process, one clock;
//     a negative time: the event came before the answer, which the daemon
//     sends once the change is journaled and handed to the watchers);
//   - Write's own p50 and p99 with a watcher and without one, and, with
//     BENCH_BASELINE=/other/checkout/bin/filetoolsd (a build without the
//     journal, e.g. main before it), that build's Write timed in the same
//     rounds: the journal's cost on Write (target: at most 10 % slower).
// Prints a Markdown table and the machine's load (other work skews it).
import { readFileSync } from "node:fs";
import { connect, type FileToolsClient, type JournalEntry } from "../../clients/ts/src/index.js";
import { Daemon, baselineName, describeMachine, ensureBuilt, loadAverage, quantile } from "./measure.js";

const WRITES = Number(process.env.BENCH_WATCH_WRITES ?? 10_000);
/** The Write-cost rows time ROUND * ROUNDS Writes of each kind, one of each in turn. */
const ROUND = 500;
const ROUNDS = Number(process.env.BENCH_WATCH_ROUNDS ?? 10);
const WARMUP = 1000;
const log = (line: string) => console.log(line);
const ms = (x: number) => `${x.toFixed(3)} ms`;

/** Writes `count` small files one after another; their answer times (ms) and, when `answered` is given, when each answer came. */
async function timedWrites(
  client: FileToolsClient,
  workspace: string,
  count: number,
  prefix: string,
  answered?: (version: string, at: number, started: number) => void,
): Promise<number[]> {
  const w = client.workspace(workspace);
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const result = await w.writeText(`/${prefix}/f${i % 100}.txt`, `line ${i}\n`);
    const at = performance.now();
    times.push(at - started);
    answered?.(`/${prefix}/f${i % 100}.txt ${result.version}`, at, started);
  }
  return times;
}

/** For each Write: its answer → the watcher's event, and its call → the event (ms). */
async function eventLatency(daemon: Daemon): Promise<{ fromAnswer: number[]; fromCall: number[] }> {
  const watcherClient = connect(daemon.address);
  const controller = new AbortController();
  const seenAt = new Map<string, number>();
  const answeredAt = new Map<string, number>();
  const calledAt = new Map<string, number>();
  let live!: () => void;
  const isLive = new Promise<void>((r) => (live = r));
  let count = 0;
  let allSeen!: () => void;
  const done = new Promise<void>((r) => (allSeen = r));
  const watching = (async () => {
    for await (const entry of watcherClient.workspace("bench").watch({ signal: controller.signal, globs: ["lat/**"], onLive: () => live() }) as AsyncIterable<JournalEntry>) {
      seenAt.set(`${entry.path} ${entry.versionAfter}`, performance.now());
      if (++count === WRITES) allSeen();
    }
  })().catch(() => undefined);
  await isLive;
  await timedWrites(daemon.client, "bench", WRITES, "lat", (key, at, started) => {
    answeredAt.set(key, at);
    calledAt.set(key, started);
  });
  await done;
  controller.abort();
  await watching;
  watcherClient.close();
  return {
    fromAnswer: [...answeredAt].map(([key, at]) => seenAt.get(key)! - at),
    fromCall: [...calledAt].map(([key, at]) => seenAt.get(key)! - at),
  };
}

async function main(): Promise<void> {
  ensureBuilt(log);
  const baselineLauncher = process.env.BENCH_BASELINE;
  const daemon = await Daemon.start({});
  const baseline = baselineLauncher ? await Daemon.start({}, [], baselineLauncher) : undefined;
  try {
    for (const d of [daemon, baseline]) await d?.client.workspaces.createWorkspace({ workspace: "bench" });
    await timedWrites(daemon.client, "bench", WARMUP, "warm");
    if (baseline) await timedWrites(baseline.client, "bench", WARMUP, "warm");

    // Write's own time: this build with no watcher, with one watcher reading, and the baseline, taking turns.
    const own: number[] = [];
    const watched: number[] = [];
    const base: number[] = [];
    const controller = new AbortController();
    const watcherClient = connect(daemon.address);
    let live!: () => void;
    const isLive = new Promise<void>((r) => (live = r));
    const draining = (async () => {
      for await (const _ of watcherClient.workspace("bench").watch({ signal: controller.signal, globs: ["watched/**"], onLive: () => live() })) void _;
    })().catch(() => undefined);
    await isLive;
    // One Write of each in turn: the load of the machine (other work on it) drifts alike over all three.
    for (let i = 0; i < ROUND * ROUNDS; i++) {
      own.push(...(await timedWrites(daemon.client, "bench", 1, `own/${i % 100}`)));
      watched.push(...(await timedWrites(daemon.client, "bench", 1, `watched/${i % 100}`)));
      if (baseline) base.push(...(await timedWrites(baseline.client, "bench", 1, `own/${i % 100}`)));
    }
    controller.abort();
    await draining;
    watcherClient.close();

    const { fromAnswer: latency, fromCall } = await eventLatency(daemon);
    const peakMiB = Number(/(\d+)/.exec(readFileSync(`/proc/${daemon.proc.pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmHWM"))!)![1]) / 1024;

    log("");
    log(`## Watch (issue 28): ${WRITES} Writes watched; Write's cost over ${ROUND * ROUNDS} Writes of each kind, taking turns`);
    for (const line of describeMachine(daemon.dataDir)) log(line);
    log("");
    log("| row | p50 | p99 | note |");
    log("|---|---|---|---|");
    log(`| Write answer → watcher event | ${ms(quantile(latency, 0.5))} | ${ms(quantile(latency, 0.99))} | ${latency.filter((x) => x < 0).length} of ${latency.length} events came before the answer (negative) |`);
    log(`| Write called → watcher event | ${ms(quantile(fromCall, 0.5))} | ${ms(quantile(fromCall, 0.99))} | the Write's whole time and the event's delivery |`);
    log(`| Write, no watcher (journaled) | ${ms(quantile(own, 0.5))} | ${ms(quantile(own, 0.99))} | |`);
    log(`| Write, one watcher reading | ${ms(quantile(watched, 0.5))} | ${ms(quantile(watched, 0.99))} | ${((quantile(watched, 0.5) / quantile(own, 0.5) - 1) * 100).toFixed(1)} % vs no watcher |`);
    if (baseline) {
      const cost = (quantile(own, 0.5) / quantile(base, 0.5) - 1) * 100;
      log(`| Write, ${baselineName()} (no journal) | ${ms(quantile(base, 0.5))} | ${ms(quantile(base, 0.99))} | journaling costs ${cost.toFixed(1)} % on Write's p50 (target ≤ 10 %) |`);
    } else {
      log("| Write, baseline | n/a | n/a | set BENCH_BASELINE=/checkout/bin/filetoolsd of a build without the journal to compare |");
    }
    log("");
    log(`daemon peak RSS ${peakMiB.toFixed(0)} MiB; load average at the end ${loadAverage()}`);
  } finally {
    await daemon.stop();
    await baseline?.stop();
  }
}

await main();
process.exit(0);
