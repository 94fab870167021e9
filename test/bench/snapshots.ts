// Snapshot and restore against GNU tar (issue 4's and issue 26's targets), in one run:
//   npm run bench:snapshots            (npx tsx test/bench/snapshots.ts)
//   BENCH_ROWS=chain,list npm run bench:snapshots   (some groups of rows only)
// Groups of rows (BENCH_ROWS, comma-separated; default all):
//   full      issue 4's rows, and issue 26's "first full snapshot" and "restore
//             from one full snapshot": the bench tree (BENCH_DATA/tree: 19,993
//             files, 310 MB, generated once by data.ts) bound into a daemon with
//             a file:// store. Measured, warm page cache, wall clock:
//               snapshot  = FinishRun (pack + gzip + store)      vs  tar -czf
//               export    = ExportSnapshot through the client     (time and memory only)
//               restore   = StartRun on a fresh daemon (LATEST)   vs  tar -xzf
//   chain     20 runs each changing 1 % of a copy of the bench tree: FinishRun vs
//             tar -czf of those files alone, store bytes after the 20, restore of
//             the chain's head, StartRun on a daemon one run behind (snapshot-rows.ts).
//             While iterating on FinishRun: BENCH_CHAIN_RUNS=N runs N runs instead
//             of 20, and BENCH_CHAIN_FINISH_ONLY=1 skips the calls of the daemon one run behind
//             and the restores (their rows then read "not run"); while iterating on the
//             one-run-behind row, BENCH_CHAIN_RESTORES=0 skips only the restores (its
//             StartRuns are those of the first ROUNDS runs)
//   one-file  FinishRun after changing 1 file of BENCH_DATA/wide (20,000 files, ~800 MB)
//   s3-read   Read of one 1 KB file at a snapshot on an s3:// store (SeaweedFS)
//   list      ListSnapshots of 20 snapshots of BENCH_DATA/many (100,000 files)
// plus the daemon's peak resident memory during each (issue 4's target: < 200 MiB).
// ROUNDS rounds (default 3), the tools and the daemon interleaved; medians.
// Each timed step starts after a `sync`, so that none pays for the writeback
// of the one before (the restore ends with a syncfs of its file system, which
// would otherwise flush what tar had just written), and nothing is deleted
// until the end: on a file system mounted with `discard` (this machine's
// ext4) a deleted 300 MB tree slows whatever writes next by seconds. A second restore
// reference, `tar -xzf` followed by `sync -f`, is as durable as the daemon's
// restore (which syncs before it swaps the workspace in).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Daemon, ensureBuilt, extractionDir, loadAverage, median, describeMachine, quantile, ROOT } from "./measure.js";
import { LAUNCHER } from "../support/dist.js";
import { ensureData, ensureSnapshotData } from "./data.js";
import { chainRows, dirBytes, listRows, measured, oneFileRows, s3ReadRows, timed, windows, type ChainResult, type ListResult, type OneFileResult, type S3ReadResult } from "./snapshot-rows.js";

const DATA = process.env.BENCH_DATA ?? path.join(os.homedir(), ".cache", "filetools-bench");
const TREE = path.join(DATA, "tree");
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const MiB = 1024 * 1024;
const GROUPS = ["full", "chain", "one-file", "s3-read", "list"] as const;
type Group = (typeof GROUPS)[number];
const ROWS = new Set((process.env.BENCH_ROWS ?? GROUPS.join(",")).split(",").filter((g) => g !== ""));
/**
 * How daemons are started: bin/filetoolsd, or with BENCH_CPU_PROF=DIR a copy
 * of it in DIR whose node also takes --cpu-prof (not allowed in NODE_OPTIONS):
 * every daemon writes a V8 CPU profile there when it stops (cpu-profile.ts reads them).
 */
function launcherFor(profiles: string | undefined): string {
  if (!profiles) return LAUNCHER;
  const dir = path.resolve(profiles);
  mkdirSync(dir, { recursive: true });
  const script = readFileSync(LAUNCHER, "utf8").replace(/^exec node /m, `exec node --cpu-prof --cpu-prof-dir=${dir} `).replace('"$here/../dist', `"${ROOT}/dist`);
  if (!script.includes("--cpu-prof")) throw new Error(`${LAUNCHER}: no "exec node" line to add --cpu-prof to`);
  const file = path.join(dir, "filetoolsd-cpu-prof");
  writeFileSync(file, script, { mode: 0o755 });
  return file;
}
const LAUNCH = launcherFor(process.env.BENCH_CPU_PROF);

interface FullResult {
  times: { tarC: number[]; tarX: number[]; tarXSync: number[]; snapshot: number[]; exportMs: number[]; restore: number[] };
  peaks: { snapshot: number; exportPeak: number; restore: number };
  summary: string;
  /** The snapshot's tarball, and every object it put in the store (tarball, table of contents, manifest, head); GNU tar's. */
  snapshotBytes: number;
  storedBytes: number;
  gnuBytes: number;
}

/** Issue 4's rounds: snapshot, export and restore of the bench tree against tar -czf and tar -xzf. */
async function fullRows(work: string, leftovers: string[]): Promise<FullResult> {
  const times = { tarC: [] as number[], tarX: [] as number[], tarXSync: [] as number[], snapshot: [] as number[], exportMs: [] as number[], restore: [] as number[] };
  const peaks = { snapshot: 0, exportPeak: 0, restore: 0 };
  let summary = "";
  let snapshotBytes = 0;
  let storedBytes = 0;
  execFileSync("sh", ["-c", `tar -cf - -C ${TREE} . > /dev/null`]); // warm the page cache
  const gnuTar = path.join(work, "gnu.tar.gz");
  for (let round = 1; round <= ROUNDS; round++) {
    // A store per round: on one shared by the rounds, a run started from no snapshot (NONE) may not publish over the last round's head.
    const storeDir = path.join(work, `store-${round}`);
    const store = `file://${storeDir}`;
    times.tarC.push(timed(`tar -czf ${gnuTar} -C ${TREE} .`));
    for (const [list, then] of [[times.tarX, ""], [times.tarXSync, " && sync -f ."]] as const) {
      const out = extractionDir(leftovers);
      list.push(timed(`cd ${out} && tar -xzf ${gnuTar}${then}`));
    }

    const a = await Daemon.start({ bench: TREE }, ["--store", store], LAUNCH);
    const { run } = await a.client.workspaces.startRun({ workspace: "bench", restore: "NONE" });
    const snap = await measured(a, () => a.client.workspaces.finishRun({ workspace: "bench", runId: run!.id }), `full snapshot ${round}`);
    const exp = await measured(a, async () => {
      let bytes = 0;
      for await (const m of a.client.workspaces.exportSnapshot({ workspace: "bench" })) if (m.event.case === "chunk") bytes += m.event.value.data.length;
      return bytes;
    }, `full export ${round}`);
    await a.stop(false);
    leftovers.push(a.dataDir);
    // daemon B: a fresh data dir, the same store; the managed workspace "bench" is restored from it
    const b = await Daemon.start({}, ["--store", store], LAUNCH);
    const restore = await measured(b, () => b.client.workspaces.startRun({ workspace: "bench" }), `full restore ${round}`);
    // Ended without a snapshot: a run still active at the stop would be snapshotted (the shutdown snapshot), which is not measured here.
    await b.client.workspaces.finishRun({ workspace: "bench", runId: restore.result.run!.id, snapshot: false });
    await b.stop(false);
    leftovers.push(b.dataDir);

    const s = snap.result.snapshot!;
    if (restore.result.run?.restoredFrom !== s.id) throw new Error("daemon B did not restore the snapshot");
    summary = `${s.fileCount} files; snapshot ${(Number(s.sizeBytes) / 1e6).toFixed(1)} MB gz`;
    snapshotBytes = Number(s.sizeBytes);
    storedBytes = dirBytes(storeDir, s.id) + dirBytes(path.join(storeDir, ".heads"));
    times.snapshot.push(snap.ms);
    times.exportMs.push(exp.ms);
    times.restore.push(restore.ms);
    peaks.snapshot = Math.max(peaks.snapshot, snap.peak);
    peaks.exportPeak = Math.max(peaks.exportPeak, exp.peak);
    peaks.restore = Math.max(peaks.restore, restore.peak);
    console.log(
      `round ${round} (pids ${a.proc.pid}, ${b.proc.pid}): snapshot ${ms1(snap.ms)} / tar -czf ${ms1(times.tarC.at(-1)!)}; restore ${ms1(restore.ms)} / tar -xzf ${ms1(times.tarX.at(-1)!)}, with sync ${ms1(times.tarXSync.at(-1)!)}`,
    );
  }
  return { times, peaks, summary, snapshotBytes, storedBytes, gnuBytes: statSync(gnuTar).size };
}

function printIssue4(full: FullResult): void {
  const { times, peaks, summary } = full;
  console.log(`\nissue 4: tree ${TREE}, ${summary}; ${os.cpus().length} CPUs, node ${process.version}; medians of ${ROUNDS} rounds\n`);
  const row = (name: string, ours: number, reference: string, theirs: number | undefined, peak: number, target = true) =>
    console.log(
      `${name.padEnd(9)} filetoolsd ${sec(ours)}` +
        (theirs === undefined
          ? "".padEnd(45)
          : `   ${reference.padEnd(17)} ${sec(theirs)}   ratio ${(ours / theirs).toFixed(2)}${target ? (ours / theirs <= 1.5 ? " ✓" : " ✗ (target ≤ 1.5)") : "   "}`) +
        `   peak RSS ${(peak / MiB).toFixed(0)} MiB${peak < 200 * MiB ? " ✓" : " ✗ (target < 200)"}`,
    );
  row("snapshot", median(times.snapshot), "tar -czf", median(times.tarC), peaks.snapshot);
  row("export", median(times.exportMs), "", undefined, peaks.exportPeak);
  row("restore", median(times.restore), "tar -xzf", median(times.tarX), peaks.restore);
  row("", median(times.restore), "tar -xzf; sync -f", median(times.tarXSync), peaks.restore, false);
}

/** One row of issue 26's table: ours, a reference (or none), the ratio or the absolute figure, the target and whether it is met. */
interface Line {
  row: string;
  ours: string;
  reference: string;
  ratio: string;
  target: string;
  met: boolean | undefined;
  note: string;
}

function compared(row: string, ours: number, reference: string, theirs: number, limit: number, note: string, format: (v: number) => string = sec, strict = false): Line {
  const ratio = ours / theirs;
  return { row, ours: format(ours), reference: `${reference}: ${format(theirs)}`, ratio: `${ratio.toFixed(2)}×`, target: `${strict ? "<" : "≤"} ${limit}×`, met: strict ? ratio < limit : ratio <= limit, note };
}

function absolute(row: string, ours: number, format: (v: number) => string, limit: number, target: string, note: string, strict = false): Line {
  return { row, ours: format(ours), reference: "", ratio: "", target, met: strict ? ours < limit : ours <= limit, note };
}

const missing = (row: string, why: string): Line => ({ row, ours: "not run", reference: "", ratio: "", target: "", met: undefined, note: why });

function renderIssue26(lines: Line[]): string {
  const header = ["row", "filetoolsd", "reference", "ratio", "target", "met", "note"];
  const body = lines.map((l) => [l.row, l.ours, l.reference, l.ratio, l.target, l.met === undefined ? "" : l.met ? "✓" : "✗", l.note].map((c) => c.replaceAll("|", "\\|")));
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...body.map(line)].join("\n");
}

interface Results {
  full?: FullResult;
  chain?: ChainResult;
  oneFile?: OneFileResult;
  s3?: S3ReadResult;
  list?: ListResult;
}

function issue26Lines(r: Results): Line[] {
  const lines: Line[] = [];
  const kib = (v: number) => `${(v / 1024).toFixed(0)} KiB`;
  const mb = (v: number) => `${(v / 1e6).toFixed(1)} MB`;
  const msf = (v: number) => `${v.toFixed(1)} ms`;
  const peak = (bytes: number) => `peak RSS ${(bytes / MiB).toFixed(0)} MiB`;
  const notRun = (group: Group) => `BENCH_ROWS without ${group}`;

  const one = r.oneFile;
  if (one) {
    const note = `${one.files.toLocaleString("en")} files, ${mb(one.treeBytes)}; median of ${one.finish.length}; first full snapshot ${ms1(one.fullMs)}, ${mb(one.fullStored)} stored; ${peak(one.peak)}`;
    lines.push(absolute("FinishRun, 1 file changed of a 20,000-file ~800 MB tree", median(one.finish), sec, 1000, "≤ 1 s", note));
    lines.push(absolute("  bytes stored by it (every object)", median(one.storedTotal), kib, MiB, "≤ 1 MiB", `of which the tarball ${kib(median(one.storedTarball))}; the rest its table of contents and manifest`));
  } else lines.push(missing("FinishRun, 1 file changed of a 20,000-file ~800 MB tree", notRun("one-file")));

  const chain = r.chain;
  if (chain) {
    lines.push(
      compared(
        `FinishRun, 1 % changed (${chain.changed} of ${chain.files.toLocaleString("en")} files)`,
        median(chain.finish),
        "tar -czf of those files",
        median(chain.tarChanged),
        1.5,
        `median of ${chain.finish.length} runs (the daemon's CPU time ${ms1(median(chain.finishCpu))}); stored per run median ${mb(median(chain.storedTotal))} (tarball ${mb(median(chain.storedTarball))}); ${peak(chain.peaks.finish)}`,
      ),
    );
  } else lines.push(missing("FinishRun, 1 % changed", notRun("chain")));

  const full = r.full;
  if (full) {
    lines.push(compared("first full snapshot of the bench tree (310 MB)", median(full.times.snapshot), "tar -czf", median(full.times.tarC), 0.5, `median of ${ROUNDS}; ${os.cpus().length} cores; ${peak(full.peaks.snapshot)}`));
    lines.push(
      compared("  its size (tarball)", full.snapshotBytes, "GNU tar's .tar.gz", full.gnuBytes, 1.15, `with its table of contents, manifest and head: ${mb(full.storedBytes)} (${(full.storedBytes / full.gnuBytes).toFixed(2)}×)`, mb),
    );
    lines.push(compared("restore into an empty workspace, one full snapshot", median(full.times.restore), "tar -xzf; sync -f", median(full.times.tarXSync), 1.0, `StartRun LATEST on a fresh daemon; median of ${ROUNDS}; plain tar -xzf ${ms1(median(full.times.tarX))}; ${peak(full.peaks.restore)}`));
  } else {
    lines.push(missing("first full snapshot of the bench tree (310 MB)", notRun("full")));
    lines.push(missing("restore into an empty workspace, one full snapshot", notRun("full")));
  }
  if (chain && chain.restore.length > 0) {
    lines.push(compared(`  … from a chain of ${chain.finish.length} incremental snapshots`, median(chain.restore), "tar -xzf; sync -f", median(chain.tarXSync), 1.0, `the head reads from ${chain.tarballs.at(-1)} tarballs; median of ${chain.restore.length}; ${peak(chain.peaks.restore)}`));
  } else lines.push(missing("  … from a chain of 20 incremental snapshots", notRun("chain")));
  if (chain) {
    lines.push(compared(`store bytes after ${chain.finish.length} runs each changing 1 %`, chain.finalStore, "one full snapshot", chain.fullStore, 1.5, `every object in the store (tarballs, tables of contents, manifests, head); keep 20, --snapshot-max-tarballs ${process.env.BENCH_CHAIN_MAX_TARBALLS ?? "21"}`, mb));
  } else lines.push(missing("store bytes after 20 runs each changing 1 %", notRun("chain")));

  const s3 = r.s3;
  if (s3) {
    lines.push(
      absolute(
        "read of a 1 KB file at a snapshot, s3://",
        median(s3.times),
        msf,
        50,
        "p50 ≤ 50 ms",
        `${s3.file} (${s3.fileBytes} B), snapshot of ${mb(s3.snapshotBytes)} on SeaweedFS; p50 of ${s3.times.length}, p90 ${msf(quantile(s3.times, 0.9))}; the first call (table of contents not cached) ${msf(s3.first)}`,
      ),
    );
  } else lines.push(missing("read of a 1 KB file at a snapshot, s3://", notRun("s3-read")));

  if (chain && chain.behind.length > 0) {
    lines.push(
      compared(
        "StartRun on a daemon whose copy is one run behind (1 % changed)",
        median(chain.behind),
        `ExportSnapshot include of the ${chain.changed} changed files`,
        median(chain.behindExport),
        2,
        `two daemons, one file:// store; median of ${chain.behind.length}; the export ${mb(chain.behindExportBytes)}; ${peak(chain.peaks.behind)}`,
      ),
    );
  } else lines.push(missing("StartRun on a daemon whose copy is one run behind", notRun("chain")));

  const list = r.list;
  if (list) {
    lines.push(absolute(`ListSnapshots, ${list.listed} snapshots × ${list.files.toLocaleString("en")} files`, median(list.times), msf, 100, "< 100 ms", `median of ${list.times.length} calls, max ${msf(Math.max(...list.times))}; snapshots took ${ms1(list.firstMs)} (first) and ${ms1(median(list.nextMs))} (median of the others)`, true));
  } else lines.push(missing("ListSnapshots, 20 snapshots × 100,000 files", notRun("list")));
  return lines;
}

async function main(): Promise<void> {
  const unknown = [...ROWS].filter((g) => !(GROUPS as readonly string[]).includes(g));
  if (unknown.length > 0) throw new Error(`BENCH_ROWS: unknown ${unknown.join(", ")}; the groups are ${GROUPS.join(", ")}`);
  const log = (line: string) => console.log(line);
  ensureBuilt(log);
  ensureData(DATA, log);
  const { manifest } = ensureSnapshotData(DATA, [...(ROWS.has("one-file") ? ["wide" as const] : []), ...(ROWS.has("list") ? ["many" as const] : [])], log);
  for (const line of describeMachine(DATA)) log(line);
  const loads = [`at the start ${uptime()}`];
  log(`rows: ${[...ROWS].join(", ")}; ROUNDS=${ROUNDS}${process.env.BENCH_CPU_PROF ? `; CPU profiles in ${process.env.BENCH_CPU_PROF}` : ""}`);
  const work = mkdtempSync(path.join(os.tmpdir(), "ftd-bench-snap-"));
  const leftovers: string[] = []; // daemons' data directories, removed at the end
  const results: Results = {};
  const step = async <T>(group: Group, run: () => Promise<T>): Promise<T | undefined> => {
    if (!ROWS.has(group)) return undefined;
    log(`\n[${group}] ${new Date().toISOString()}, load average ${loadAverage()}`);
    const result = await run();
    loads.push(`after ${group} ${loadAverage()}`);
    return result;
  };
  const soFar = (): void => {
    if (ROWS.size > 1) log(`\nissue 26 so far:\n${renderIssue26(issue26Lines(results).filter((l) => l.met !== undefined))}`);
  };
  try {
    results.full = await step("full", () => fullRows(work, leftovers));
    soFar();
    const finishOnly = process.env.BENCH_CHAIN_FINISH_ONLY === "1";
    const chainRuns = Number(process.env.BENCH_CHAIN_RUNS ?? 20);
    const chainRestores = finishOnly ? 0 : Number(process.env.BENCH_CHAIN_RESTORES ?? ROUNDS);
    results.chain = await step("chain", () => chainRows(TREE, work, chainRuns, chainRestores, finishOnly ? 0 : ROUNDS, leftovers, LAUNCH));
    soFar();
    results.oneFile = await step("one-file", () => oneFileRows(path.join(DATA, "wide"), work, ROUNDS, leftovers, LAUNCH));
    soFar();
    results.s3 = await step("s3-read", () => s3ReadRows(TREE, 20, leftovers, LAUNCH));
    soFar();
    results.list = await step("list", () => listRows(path.join(DATA, "many"), work, 5 * ROUNDS, leftovers, LAUNCH));
  } finally {
    if (process.env.BENCH_CPU_PROF) writeFileSync(path.join(process.env.BENCH_CPU_PROF, "windows.json"), JSON.stringify(windows, null, 1));
    // BENCH_KEEP_WORK=1: leave the stores and data directories for a look (they are named in the log).
    if (process.env.BENCH_KEEP_WORK) log(`kept: ${[work, ...leftovers].join(" ")}`);
    else for (const dir of [...leftovers, work]) rmSync(dir, { recursive: true, force: true });
  }
  if (results.full) printIssue4(results.full);
  loads.push(`at the end ${uptime()}`);
  log(`\nissue 26, ${new Date().toISOString()}; wide/: ${manifest.wide ? `${manifest.wide.files.toLocaleString("en")} files, ${(manifest.wide.bytes / 1e6).toFixed(0)} MB` : "not used"}; ROUNDS=${ROUNDS}`);
  log(`load: ${loads.join("; ")}\n`);
  log(renderIssue26(issue26Lines(results)));
}

/** `uptime`'s line (the load with the time it was read). */
function uptime(): string {
  return execFileSync("uptime", { encoding: "utf8" }).trim();
}

function ms1(value: number): string {
  return `${(value / 1000).toFixed(2)} s`;
}

function sec(value: number): string {
  return `${(value / 1000).toFixed(2).padStart(6)} s`;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
