// Snapshot and restore against GNU tar (issue 4 targets), in one run:
//   npx tsx test/bench/snapshots.ts
// The benchmark tree of test/bench (BENCH_DATA/tree: 19,993 files, 310 MB,
// generated once by data.ts) is bound into a daemon with a file:// store. Measured, warm page cache, wall clock:
//   snapshot  = FinishRun (pack + gzip + store)      vs  tar -czf
//   export    = ExportSnapshot through the client     (time and memory only)
//   restore   = StartRun on a fresh daemon (LATEST)   vs  tar -xzf
// plus the daemon's peak resident memory during each (target: < 200 MiB).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Daemon, ensureBuilt, ms } from "./measure.js";
import { ensureData } from "./data.js";

const DATA = process.env.BENCH_DATA ?? path.join(os.homedir(), ".cache", "filetools-bench");
const TREE = path.join(DATA, "tree");
const MiB = 1024 * 1024;

/** Time and peak resident memory of one call to the daemon. */
async function measured<T>(daemon: Daemon, work: () => Promise<T>): Promise<{ result: T; ms: number; peak: number }> {
  const started = process.hrtime.bigint();
  const { result, peak } = await daemon.peakDuring(work);
  return { result, ms: ms(started), peak };
}

function timed(cmd: string, args: string[]): number {
  const started = process.hrtime.bigint();
  execFileSync(cmd, args, { stdio: "ignore" });
  return ms(started);
}

async function main(): Promise<void> {
  ensureBuilt((line) => console.log(line));
  ensureData(DATA, (line) => console.log(line));
  const work = mkdtempSync(path.join(os.tmpdir(), "ftd-bench-snap-"));
  try {
    execFileSync("sh", ["-c", `tar -cf - -C ${TREE} . > /dev/null`]); // warm the page cache
    const gnuTar = path.join(work, "gnu.tar.gz");
    const tarC = timed("tar", ["-czf", gnuTar, "-C", TREE, "."]);
    const out = path.join(work, "gnu-x");
    mkdirSync(out);
    const tarX = timed("tar", ["-xzf", gnuTar, "-C", out]);
    rmSync(out, { recursive: true, force: true });

    const store = `file://${path.join(work, "store")}`;
    const a = await Daemon.start({ bench: TREE }, ["--store", store]);
    const { run } = await a.client.workspaces.startRun({ workspace: "bench", restore: "NONE" });
    const snap = await measured(a, () => a.client.workspaces.finishRun({ workspace: "bench", runId: run!.id }));
    const exp = await measured(a, async () => {
      let bytes = 0;
      for await (const m of a.client.workspaces.exportSnapshot({ workspace: "bench" })) if (m.event.case === "chunk") bytes += m.event.value.data.length;
      return bytes;
    });
    await a.stop();
    // daemon B: a fresh data dir, the same store; the managed workspace "bench" is restored from it
    const b = await Daemon.start({}, ["--store", store]);
    const restore = await measured(b, () => b.client.workspaces.startRun({ workspace: "bench" }));
    await b.stop();

    const s = snap.result.snapshot!;
    console.log(`\ntree: ${TREE}, ${s.fileCount} files; snapshot ${(Number(s.sizeBytes) / 1e6).toFixed(1)} MB gz; ${os.cpus().length} CPUs, node ${process.version}\n`);
    const row = (name: string, ours: number, theirs: number | undefined, peak: number) =>
      console.log(
        `${name.padEnd(10)} filetoolsd ${(ours / 1000).toFixed(2).padStart(6)} s` +
          (theirs === undefined ? "".padEnd(30) : `   GNU tar ${(theirs / 1000).toFixed(2).padStart(6)} s   ratio ${(ours / theirs).toFixed(2)}${ours / theirs <= 1.5 ? " ✓" : " ✗ (target ≤ 1.5)"}`) +
          `   peak RSS ${(peak / MiB).toFixed(0)} MiB${peak < 200 * MiB ? " ✓" : " ✗ (target < 200)"}`,
      );
    row("snapshot", snap.ms, tarC, snap.peak);
    row("export", exp.ms, undefined, exp.peak);
    row("restore", restore.ms, tarX, restore.peak);
    if (restore.result.run?.restoredFrom !== s.id) throw new Error("daemon B did not restore the snapshot");
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
