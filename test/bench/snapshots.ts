// Snapshot and restore against GNU tar (issue 4 targets), in one run:
//   npx tsx test/bench/snapshots.ts
// The benchmark tree of test/bench (BENCH_DATA/tree: 19,993 files, 310 MB,
// generated once by data.ts) is bound into a daemon with a file:// store. Measured, warm page cache, wall clock:
//   snapshot  = FinishRun (pack + gzip + store)      vs  tar -czf
//   export    = ExportSnapshot through the client     (time and memory only)
//   restore   = StartRun on a fresh daemon (LATEST)   vs  tar -xzf
// plus the daemon's peak resident memory during each (target: < 200 MiB).
// ROUNDS rounds (default 3), the tools and the daemon interleaved; medians.
// Each timed step starts after a `sync`, so that none pays for the writeback
// of the one before (the restore ends with a syncfs of its file system, which
// would otherwise flush what tar had just written), and nothing is deleted
// until the end: on a file system mounted with `discard` (this machine's
// ext4) a deleted 300 MB tree slows whatever writes next by seconds. A second restore
// reference, `tar -xzf` followed by `sync -f`, is as durable as the daemon's
// restore (which syncs before it swaps the workspace in).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Daemon, ensureBuilt, ms } from "./measure.js";
import { ensureData } from "./data.js";

const DATA = process.env.BENCH_DATA ?? path.join(os.homedir(), ".cache", "filetools-bench");
const TREE = path.join(DATA, "tree");
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const MiB = 1024 * 1024;

/** Time and peak resident memory of one call to the daemon, after a sync. */
async function measured<T>(daemon: Daemon, work: () => Promise<T>): Promise<{ result: T; ms: number; peak: number }> {
  execFileSync("sync");
  const started = process.hrtime.bigint();
  const { result, peak } = await daemon.peakDuring(work);
  return { result, ms: ms(started), peak };
}

/** Wall time of a shell command, after a sync. */
function timed(command: string): number {
  execFileSync("sync");
  const started = process.hrtime.bigint();
  execFileSync("sh", ["-c", command], { stdio: "ignore" });
  return ms(started);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  ensureBuilt((line) => console.log(line));
  ensureData(DATA, (line) => console.log(line));
  const work = mkdtempSync(path.join(os.tmpdir(), "ftd-bench-snap-"));
  const times = { tarC: [] as number[], tarX: [] as number[], tarXSync: [] as number[], snapshot: [] as number[], exportMs: [] as number[], restore: [] as number[] };
  const peaks = { snapshot: 0, exportPeak: 0, restore: 0 };
  let summary = "";
  const leftovers: string[] = []; // daemons' data directories, removed at the end
  try {
    execFileSync("sh", ["-c", `tar -cf - -C ${TREE} . > /dev/null`]); // warm the page cache
    const gnuTar = path.join(work, "gnu.tar.gz");
    const store = `file://${path.join(work, "store")}`;
    for (let round = 1; round <= ROUNDS; round++) {
      times.tarC.push(timed(`tar -czf ${gnuTar} -C ${TREE} .`));
      for (const [list, then] of [[times.tarX, ""], [times.tarXSync, " && sync -f ."]] as const) {
        const out = path.join(work, `gnu-x-${round}-${list.length}-${then ? "sync" : "plain"}`);
        mkdirSync(out);
        list.push(timed(`cd ${out} && tar -xzf ${gnuTar}${then}`));
      }

      const a = await Daemon.start({ bench: TREE }, ["--store", store, "--keep-snapshots", "1"]);
      const { run } = await a.client.workspaces.startRun({ workspace: "bench", restore: "NONE" });
      const snap = await measured(a, () => a.client.workspaces.finishRun({ workspace: "bench", runId: run!.id }));
      const exp = await measured(a, async () => {
        let bytes = 0;
        for await (const m of a.client.workspaces.exportSnapshot({ workspace: "bench" })) if (m.event.case === "chunk") bytes += m.event.value.data.length;
        return bytes;
      });
      await a.stop(false);
      leftovers.push(a.dataDir);
      // daemon B: a fresh data dir, the same store; the managed workspace "bench" is restored from it
      const b = await Daemon.start({}, ["--store", store]);
      const restore = await measured(b, () => b.client.workspaces.startRun({ workspace: "bench" }));
      await b.stop(false);
      leftovers.push(b.dataDir);

      const s = snap.result.snapshot!;
      if (restore.result.run?.restoredFrom !== s.id) throw new Error("daemon B did not restore the snapshot");
      summary = `${s.fileCount} files; snapshot ${(Number(s.sizeBytes) / 1e6).toFixed(1)} MB gz`;
      times.snapshot.push(snap.ms);
      times.exportMs.push(exp.ms);
      times.restore.push(restore.ms);
      peaks.snapshot = Math.max(peaks.snapshot, snap.peak);
      peaks.exportPeak = Math.max(peaks.exportPeak, exp.peak);
      peaks.restore = Math.max(peaks.restore, restore.peak);
      console.log(
        `round ${round}: snapshot ${ms1(snap.ms)} / tar -czf ${ms1(times.tarC.at(-1)!)}; restore ${ms1(restore.ms)} / tar -xzf ${ms1(times.tarX.at(-1)!)}, with sync ${ms1(times.tarXSync.at(-1)!)}`,
      );
    }

    console.log(`\ntree: ${TREE}, ${summary}; ${os.cpus().length} CPUs, node ${process.version}; medians of ${ROUNDS} rounds\n`);
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
  } finally {
    for (const dir of [...leftovers, work]) rmSync(dir, { recursive: true, force: true });
  }
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
