// Search benchmarks' common part: a case is one Search request and the rg and
// grep commands that find the same results; each runs once per tool as a
// warm-up (page cache, JIT; it also gives the result counts), then
// SEARCH_RUNS interleaved rounds (load from elsewhere hits every column
// alike), medians, the daemon's peak RSS over its rounds and its CPU time per
// call (user + system, all threads; what the wall clock hides when other work
// shares the cores).
// BENCH_BASELINE=/other/checkout/bin/filetoolsd also times another build of the
// daemon in the same rounds (its median in the table's baseline column, its
// CPU and peak in the note): before and after a change, in one run.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { OutputMode, type SearchRequestSchema } from "@filetools/proto/filetools/v1/files_pb.js";
import { FileToolsError } from "../../clients/ts/src/client.js";
import { Daemon, median, ms, runTool } from "./measure.js";
import type { Compared, Row } from "./table.js";

const SEARCH_RUNS = 5;

/** The daemon caps results at 10,000. */
export const MAX_RESULTS = 10_000;

export interface SearchCase {
  name: string;
  /** The bound workspace searched, and the directory it is bound to (where the tools run). */
  workspace: string;
  dir: string;
  /** max_results is MAX_RESULTS unless the request says otherwise. */
  request: MessageInitShape<typeof SearchRequestSchema>;
  rg: string;
  grep: string;
  /** How the tools are named in the table. */
  labels: [string, string];
  /** Results in a tool's output: matching lines, or the sum of per-file counts. */
  count: (stdout: string) => number;
  /** A third command, timed in the same rounds and reported in the note (label: its median). */
  aside?: { label: string; cmd: string };
}

export const sumCounts = (stdout: string) => stdout.split("\n").reduce((sum, line) => sum + (Number(line.slice(line.lastIndexOf(":") + 1)) || 0), 0);

/** rg reads .gitignore outside a git repository only with --no-require-git, as the daemon does. */
export const RG = "rg -j2 --no-require-git";

/** One Search to the end of its stream, as the clients ask for it (matches in batches). */
async function timedSearch(daemon: Daemon, c: SearchCase) {
  const started = process.hrtime.bigint();
  let results = 0;
  let summary: { truncated: boolean; timedOut: boolean } | undefined;
  const stream = daemon.client.files.search(
    { workspace: c.workspace, maxResults: MAX_RESULTS, outputMode: OutputMode.CONTENT, batchMatches: true, ...c.request },
    { deadline: 300_000 },
  );
  for await (const m of stream) {
    if (m.event.case === "matches") results += m.event.value.matches.length;
    else if (m.event.case === "match") results++;
    else if (m.event.case === "count") results += Number(m.event.value.count);
    else if (m.event.case === "summary") summary = m.event.value;
  }
  return { ms: ms(started), results, summary };
}

/** The daemon and, with BENCH_BASELINE, the baseline daemon, both binding `binds`; `work` runs, then both stop. */
export async function withSearchDaemons<T>(binds: Record<string, string>, work: (daemon: Daemon, baseline?: Daemon) => Promise<T>): Promise<T> {
  const daemon = await Daemon.start(binds);
  const launcher = process.env.BENCH_BASELINE;
  const baseline = launcher ? await Daemon.start(binds, [], launcher) : undefined;
  try {
    return await work(daemon, baseline);
  } finally {
    await daemon.stop();
    await baseline?.stop();
  }
}

/** The rows of `cases`, on `daemon` (which binds each case's workspace), and on `baseline` if there is one. */
export async function searchRows(daemon: Daemon, cases: SearchCase[], haveRg: boolean, log: (line: string) => void, baseline?: Daemon): Promise<Row[]> {
  const rows: Row[] = [];
  let unserved: string | undefined; // once Search answers UNIMPLEMENTED, no case asks again
  for (const c of cases) {
    log(`${c.name} …`);
    let failure = unserved; // why the daemon has no time
    const attempt = async <T>(call: () => Promise<T>): Promise<T | undefined> => {
      if (failure) return undefined;
      try {
        return await call();
      } catch (error) {
        if (!(error instanceof FileToolsError)) throw error;
        if (error.codeName === "UNIMPLEMENTED") unserved = "n/a (Search not served)";
        failure = unserved ?? `error ${error.codeName}: ${error.message}`;
        return undefined;
      }
    };
    const daemonResults = await attempt(() => timedSearch(daemon, c));
    const rgCount = haveRg ? c.count((await runTool(c.rg, c.dir)).stdout) : undefined;
    const grepCount = c.count((await runTool(c.grep, c.dir)).stdout);
    if (c.aside) await runTool(c.aside.cmd, c.dir);
    if (baseline) await timedSearch(baseline, c);

    const daemonTimes: number[] = [];
    const rgTimes: number[] = [];
    const grepTimes: number[] = [];
    const asideTimes: number[] = [];
    const baselineTimes: number[] = [];
    const cpu: number[] = [];
    const baselineCpu: number[] = [];
    let baselinePeak = 0;
    let peak: number | undefined;
    for (let i = 0; i < SEARCH_RUNS; i++) {
      const cpuBefore = daemon.cpuMs();
      const run = await attempt(() => daemon.peakDuring(() => timedSearch(daemon, c)));
      if (run) {
        daemonTimes.push(run.result.ms);
        cpu.push(daemon.cpuMs() - cpuBefore);
        peak = Math.max(peak ?? 0, run.peak);
      }
      if (haveRg) rgTimes.push((await runTool(c.rg, c.dir)).ms);
      grepTimes.push((await runTool(c.grep, c.dir)).ms);
      if (c.aside) asideTimes.push((await runTool(c.aside.cmd, c.dir)).ms);
      if (baseline) {
        const cpuBefore = baseline.cpuMs();
        const before = await baseline.peakDuring(() => timedSearch(baseline, c));
        baselineTimes.push(before.result.ms);
        baselineCpu.push(baseline.cpuMs() - cpuBefore);
        baselinePeak = Math.max(baselinePeak, before.peak);
      }
    }
    const tools: Compared[] = [
      haveRg ? { tool: c.labels[0], ms: median(rgTimes) } : { tool: c.labels[0], missing: "n/a (ripgrep not installed)" },
      { tool: c.labels[1], ms: median(grepTimes) },
    ];
    const counts = `results daemon/rg/grep: ${daemonResults?.results ?? "–"}/${rgCount ?? "–"}/${grepCount}`;
    const flags = [daemonResults?.summary?.truncated ? "daemon stopped at max_results" : "", daemonResults?.summary?.timedOut ? "daemon timed out" : ""].filter(Boolean);
    const aside = c.aside && asideTimes.length > 0 ? [`${c.aside.label}: ${median(asideTimes).toFixed(1)} ms`] : [];
    const cpuNote = cpu.length > 0 ? [`daemon CPU ${median(cpu).toFixed(0)} ms/call`] : [];
    const before = baseline ? [`baseline CPU ${median(baselineCpu).toFixed(0)} ms/call, peak ${(baselinePeak / 2 ** 20).toFixed(0)} MiB`] : [];
    const note = [counts, ...flags, ...aside, ...cpuNote, ...before].join("; ");
    rows.push({ name: c.name, daemon: failure ?? median(daemonTimes), tools, peakRss: peak, note, baseline: baseline ? median(baselineTimes) : undefined });
  }
  return rows;
}
