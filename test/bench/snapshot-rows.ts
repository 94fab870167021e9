// Issue 26's rows of the snapshot benchmark (snapshots.ts runs them and prints
// the table): incremental runs, restores from a chain, store growth, a small
// export from s3://, a daemon one run behind, and ListSnapshots of large trees.
// Each function measures one group of rows and returns its figures; nothing
// here asserts a target.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CHANGING_FILE, prng } from "./data.js";
import { Daemon, extractionDir, median, ms, quantile } from "./measure.js";
import { startSeaweedfs } from "../support/seaweedfs.js";

/**
 * The measured calls, each with its daemon's pid and its span on the monotonic
 * clock in µs (the clock of V8's CPU profiles on Linux: cpu-profile.ts cuts a
 * daemon's profile to one call with it).
 */
export const windows: { label: string; pid: number; startUs: number; endUs: number }[] = [];

/**
 * Time, peak resident memory and the daemon's CPU time (all its threads) of
 * one call to the daemon, after a sync; `label` names its window. On a busy
 * machine the CPU time moves less than the wall time with the others' load.
 */
export async function measured<T>(daemon: Daemon, work: () => Promise<T>, label = "call"): Promise<{ result: T; ms: number; peak: number; cpuMs: number }> {
  execFileSync("sync");
  const cpuBefore = cpuMsOf(daemon.proc.pid!);
  const started = process.hrtime.bigint();
  const { result, peak } = await daemon.peakDuring(work);
  windows.push({ label, pid: daemon.proc.pid!, startUs: Number(started / 1000n), endUs: Number(process.hrtime.bigint() / 1000n) });
  return { result, ms: ms(started), peak, cpuMs: cpuMsOf(daemon.proc.pid!) - cpuBefore };
}

/** User and system CPU time of a process so far, in ms (/proc/PID/stat, in clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Wall time of a shell command, after a sync. */
export function timed(command: string): number {
  execFileSync("sync");
  const started = process.hrtime.bigint();
  execFileSync("sh", ["-c", command], { stdio: "ignore" });
  return ms(started);
}

/** Bytes of every file under `dir` (a file:// store), optionally only those whose name starts with `prefix`. */
export function dirBytes(dir: string, prefix = ""): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.startsWith(prefix)) total += statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return total;
}

/** Workspace-relative paths of the regular files under `root`, sorted. */
function filesUnder(root: string): string[] {
  return readdirSync(root, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .sort();
}

/** Appends a line to each file, as a tool writing it would: a new file renamed over the old (new inode, new stat). */
function touchFiles(root: string, rels: readonly string[], run: number): void {
  for (const rel of rels) {
    const full = path.join(root, rel);
    const temp = `${full}.bench-${run}`;
    writeFileSync(temp, Buffer.concat([readFileSync(full), Buffer.from(`\n// changed by benchmark run ${run}\n`)]));
    renameSync(temp, full);
  }
}

/** `count` distinct files of `all`, seeded by `seed`. */
function pick(all: readonly string[], count: number, seed: number): string[] {
  const rnd = prng(seed);
  const chosen = new Set<string>();
  while (chosen.size < count) chosen.add(all[rnd() % all.length]!);
  return [...chosen].sort();
}

/** A file's text at a snapshot (Read with at_snapshot). */
async function textAt(daemon: Daemon, workspace: string, file: string, atSnapshot: string): Promise<string> {
  let text = "";
  for await (const m of daemon.client.files.read({ workspace, path: `/${file}`, atSnapshot })) if (m.event.case === "chunk") text += m.event.value.text;
  return text;
}

async function exportBytes(daemon: Daemon, workspace: string, include: string[] = []): Promise<number> {
  let bytes = 0;
  for await (const m of daemon.client.workspaces.exportSnapshot({ workspace, include })) if (m.event.case === "chunk") bytes += m.event.value.data.length;
  return bytes;
}

const log = (line: string) => console.log(line);
const s2 = (value: number) => `${(value / 1000).toFixed(2)} s`;
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

// ---- 20 runs each changing 1 % of the files -----------------------------------

export interface ChainResult {
  files: number;
  changed: number;
  /** Per run: FinishRun, `tar -czf` of the changed files alone, the tarball stored, all bytes the run added to the store. */
  finish: number[];
  /** The publisher's CPU time during each FinishRun. */
  finishCpu: number[];
  tarChanged: number[];
  storedTarball: number[];
  storedTotal: number[];
  tarballs: number[];
  /** The store after the first (full) snapshot, and after the 20 runs. */
  fullStore: number;
  finalStore: number;
  /** StartRun of daemon A, one run behind, and ExportSnapshot of only the changed files (on A, just before). */
  behind: number[];
  behindExport: number[];
  behindExportBytes: number;
  /** Restore of the chain's head on a fresh daemon, and `tar -xzf; sync -f` of a GNU tarball of the same tree. */
  restore: number[];
  tarXSync: number[];
  peaks: { finish: number; behind: number; restore: number };
}

/**
 * Daemon P binds a copy of the bench tree (file:// store, keep 20 as by
 * default, --snapshot-max-tarballs 21 so that the 20 runs stay one chain) and
 * publishes a full snapshot, then `runs` runs (20 in the issue's rows), each changing 1 % of the files
 * behind its back (a line appended, written as a new file renamed over the
 * old). Daemon A, on the same store with a managed copy, restores the full
 * snapshot once; for the first `behindRounds` runs it then exports the
 * changed files and starts a run (one run behind: a restore of the new head).
 * After the runs, `rounds` fresh daemons restore the head into an empty
 * workspace.
 */
export async function chainRows(tree: string, work: string, runs: number, rounds: number, behindRounds: number, leftovers: string[], launcher: string): Promise<ChainResult> {
  const copy = path.join(work, "chain-tree");
  const storeDir = path.join(work, "chain-store");
  const store = `file://${storeDir}`;
  execFileSync("cp", ["-a", tree, copy]);
  const all = filesUnder(copy);
  const changed = Math.round(all.length / 100);
  const r: ChainResult = {
    files: all.length,
    changed,
    finish: [],
    finishCpu: [],
    tarChanged: [],
    storedTarball: [],
    storedTotal: [],
    tarballs: [],
    fullStore: 0,
    finalStore: 0,
    behind: [],
    behindExport: [],
    behindExportBytes: 0,
    restore: [],
    tarXSync: [],
    peaks: { finish: 0, behind: 0, restore: 0 },
  };
  // BENCH_CHAIN_MAX_TARBALLS=16 (the daemon's default) shows the compaction policy at work instead (a run written whole).
  const p = await Daemon.start({ bench: copy }, ["--store", store, "--snapshot-max-tarballs", process.env.BENCH_CHAIN_MAX_TARBALLS ?? "21"], launcher);
  const a = await Daemon.start({}, ["--store", store], launcher);
  log(`chain: publisher pid ${p.proc.pid}, daemon one run behind pid ${a.proc.pid}`);
  try {
    execFileSync("sh", ["-c", `tar -cf - -C ${copy} . > /dev/null`]); // warm the page cache
    const { run } = await p.client.workspaces.startRun({ workspace: "bench", restore: "NONE" });
    const full = await measured(p, () => p.client.workspaces.finishRun({ workspace: "bench", runId: run!.id }), "chain full snapshot");
    r.fullStore = dirBytes(storeDir);
    log(`chain: full snapshot ${s2(full.ms)}, store ${mb(r.fullStore)} (tarball ${mb(Number(full.result.snapshot!.sizeBytes))})`);
    const first = await a.client.workspaces.startRun({ workspace: "bench" });
    if (first.run?.restoredFrom !== full.result.snapshot!.id) throw new Error("daemon A did not restore the full snapshot");
    await a.client.workspaces.finishRun({ workspace: "bench", runId: first.run.id, snapshot: false });

    for (let i = 1; i <= runs; i++) {
      const { run } = await p.client.workspaces.startRun({ workspace: "bench" });
      if (run?.restoredFrom) throw new Error(`run ${i} of the publisher restored ${run.restoredFrom}`);
      const chosen = pick(all, changed, 26_000 + i);
      touchFiles(copy, chosen, i);
      const before = dirBytes(storeDir);
      const fin = await measured(p, () => p.client.workspaces.finishRun({ workspace: "bench", runId: run!.id }), `chain run ${i} FinishRun`);
      const snap = fin.result.snapshot!;
      r.finish.push(fin.ms);
      r.finishCpu.push(fin.cpuMs);
      r.peaks.finish = Math.max(r.peaks.finish, fin.peak);
      r.storedTarball.push(Number(snap.sizeBytes));
      r.storedTotal.push(dirBytes(storeDir) - before);
      r.tarballs.push(snap.tarballs);
      const list = path.join(work, `changed-${i}.txt`);
      writeFileSync(list, chosen.join("\n") + "\n");
      r.tarChanged.push(timed(`tar -czf ${path.join(work, `changed-${i}.tar.gz`)} -C ${copy} --verbatim-files-from -T ${list}`));
      let behindNote = "";
      if (i <= behindRounds) {
        const exp = await measured(a, () => exportBytes(a, "bench", chosen), `behind ${i} export`);
        const start = await measured(a, () => a.client.workspaces.startRun({ workspace: "bench" }), `behind ${i} StartRun`);
        if (start.result.run?.restoredFrom !== snap.id) throw new Error(`daemon A did not restore run ${i}'s snapshot`);
        await a.client.workspaces.finishRun({ workspace: "bench", runId: start.result.run.id, snapshot: false });
        r.behind.push(start.ms);
        r.behindExport.push(exp.ms);
        r.behindExportBytes = exp.result;
        r.peaks.behind = Math.max(r.peaks.behind, start.peak);
        behindNote = `; one behind: StartRun ${s2(start.ms)}, export of the ${changed} files ${s2(exp.ms)} (${mb(exp.result)})`;
      }
      log(
        `chain run ${i}: FinishRun ${s2(fin.ms)} (daemon CPU ${s2(fin.cpuMs)}) / tar -czf of the ${changed} files ${s2(r.tarChanged.at(-1)!)}; stored ${mb(r.storedTotal.at(-1)!)} (tarball ${mb(Number(snap.sizeBytes))}, ${snap.tarballs} tarballs)${behindNote}`,
      );
    }
    r.finalStore = dirBytes(storeDir);
    const head = (await p.client.workspaces.listSnapshots({ workspace: "bench" })).snapshots[0]!.id;

    const gnuTar = path.join(work, "chain-gnu.tar.gz");
    execFileSync("sh", ["-c", `tar -czf ${gnuTar} -C ${copy} .`]);
    for (let round = 1; round <= rounds; round++) {
      const out = extractionDir(leftovers);
      r.tarXSync.push(timed(`cd ${out} && tar -xzf ${gnuTar} && sync -f .`));
      const b = await Daemon.start({}, ["--store", store], launcher);
      const restore = await measured(b, () => b.client.workspaces.startRun({ workspace: "bench" }), `chain restore ${round}`);
      // Ended without a snapshot: a run still active at the stop would be snapshotted and published (a new head, here written whole past 21 tarballs).
      await b.client.workspaces.finishRun({ workspace: "bench", runId: restore.result.run!.id, snapshot: false });
      await b.stop(false);
      leftovers.push(b.dataDir);
      if (restore.result.run?.restoredFrom !== head) throw new Error("the fresh daemon did not restore the chain's head");
      r.restore.push(restore.ms);
      r.peaks.restore = Math.max(r.peaks.restore, restore.peak);
      log(`chain restore ${round} (pid ${b.proc.pid}): ${s2(restore.ms)} / tar -xzf; sync -f ${s2(r.tarXSync.at(-1)!)}`);
    }
  } finally {
    await p.stop(false);
    await a.stop(false);
    leftovers.push(p.dataDir, a.dataDir);
  }
  return r;
}

// ---- one file changed in a 20,000-file, ~800 MB tree ------------------------------

export interface OneFileResult {
  treeBytes: number;
  files: number;
  fullMs: number;
  fullStored: number;
  finish: number[];
  storedTarball: number[];
  storedTotal: number[];
  peak: number;
}

/** BENCH_DATA/wide bound, one full snapshot, then `rounds` runs each rewriting CHANGING_FILE (a line appended). */
export async function oneFileRows(wide: string, work: string, rounds: number, leftovers: string[], launcher: string): Promise<OneFileResult> {
  const storeDir = path.join(work, "wide-store");
  const d = await Daemon.start({ wide }, ["--store", `file://${storeDir}`], launcher);
  log(`one file of ~800 MB: daemon pid ${d.proc.pid}`);
  try {
    execFileSync("sh", ["-c", `tar -cf - -C ${wide} . > /dev/null`]); // warm the page cache
    const { run } = await d.client.workspaces.startRun({ workspace: "wide", restore: "NONE" });
    const full = await measured(d, () => d.client.workspaces.finishRun({ workspace: "wide", runId: run!.id }), "wide full snapshot");
    const snap = full.result.snapshot!;
    const r: OneFileResult = { treeBytes: Number(snap.treeBytes), files: Number(snap.fileCount), fullMs: full.ms, fullStored: dirBytes(storeDir), finish: [], storedTarball: [], storedTotal: [], peak: 0 };
    log(`one file: full snapshot of ${r.files} files, ${mb(r.treeBytes)}: ${s2(full.ms)}, stored ${mb(r.fullStored)}`);
    const changing = path.join(wide, CHANGING_FILE);
    for (let i = 1; i <= rounds; i++) {
      const { run } = await d.client.workspaces.startRun({ workspace: "wide" });
      const temp = `${changing}.bench`;
      writeFileSync(temp, Buffer.concat([readFileSync(changing), Buffer.from(`run ${new Date().toISOString()}\n`)]));
      renameSync(temp, changing);
      const before = dirBytes(storeDir);
      const fin = await measured(d, () => d.client.workspaces.finishRun({ workspace: "wide", runId: run!.id }), `wide run ${i} FinishRun`);
      r.finish.push(fin.ms);
      r.storedTarball.push(Number(fin.result.snapshot!.sizeBytes));
      r.storedTotal.push(dirBytes(storeDir) - before);
      r.peak = Math.max(r.peak, fin.peak);
      log(`one file, run ${i}: FinishRun ${s2(fin.ms)}, stored ${(r.storedTotal.at(-1)! / 1024).toFixed(0)} KiB (tarball ${(r.storedTarball.at(-1)! / 1024).toFixed(1)} KiB)`);
    }
    return r;
  } finally {
    await d.stop(false);
    leftovers.push(d.dataDir);
  }
}

// ---- a 1 KB file of a snapshot on s3:// -----------------------------------------------

export interface S3ReadResult {
  file: string;
  fileBytes: number;
  snapshotMs: number;
  snapshotBytes: number;
  first: number;
  times: number[];
}

/**
 * The bench tree bound to a daemon on an s3:// store (SeaweedFS on loopback),
 * one full snapshot, then a Read of one ~1 KB file at that snapshot,
 * `samples` times (the first, which reads the table of contents, apart).
 */
export async function s3ReadRows(tree: string, samples: number, leftovers: string[], launcher: string): Promise<S3ReadResult> {
  const s3 = await startSeaweedfs();
  try {
    const args = ["--store", `s3://${s3.bucket}/bench26`, "--s3-endpoint", s3.endpoint, "--s3-force-path-style"];
    const d = await Daemon.start({ bench: tree }, args, launcher, { ...process.env, ...s3.env });
    log(`s3 read: daemon pid ${d.proc.pid}`);
    try {
      const { run } = await d.client.workspaces.startRun({ workspace: "bench", restore: "NONE" });
      const snap = await measured(d, () => d.client.workspaces.finishRun({ workspace: "bench", runId: run!.id }), "s3 full snapshot");
      // The file closest to 1 KB.
      let file = "";
      let best = Number.POSITIVE_INFINITY;
      for (const rel of filesUnder(tree)) {
        const size = statSync(path.join(tree, rel)).size;
        if (Math.abs(size - 1024) < best) [file, best] = [rel, Math.abs(size - 1024)];
      }
      const snapshotId = snap.result.snapshot!.id;
      const r: S3ReadResult = { file, fileBytes: statSync(path.join(tree, file)).size, snapshotMs: snap.ms, snapshotBytes: Number(snap.result.snapshot!.sizeBytes), first: 0, times: [] };
      for (let i = 0; i <= samples; i++) {
        const { result: text, ms: took } = await measured(d, () => textAt(d, "bench", file, snapshotId), `s3 read ${i}`);
        if (text !== readFileSync(path.join(tree, file), "utf8")) throw new Error(`the read of ${file} at the snapshot is not the file`);
        if (i === 0) r.first = took;
        else r.times.push(took);
      }
      log(`s3 read: ${file} (${r.fileBytes} B) of a snapshot of ${mb(r.snapshotBytes)} (written in ${s2(r.snapshotMs)}): first ${r.first.toFixed(0)} ms, p50 ${median(r.times).toFixed(1)} ms, p90 ${quantile(r.times, 0.9).toFixed(1)} ms`);
      return r;
    } finally {
      await d.stop(false);
      leftovers.push(d.dataDir);
    }
  } finally {
    await s3.stop();
  }
}

// ---- ListSnapshots of 20 snapshots × 100,000 files --------------------------------------

export interface ListResult {
  files: number;
  firstMs: number;
  nextMs: number[];
  listed: number;
  times: number[];
}

/** BENCH_DATA/many bound, 20 snapshots (the first full, the others of an unchanged tree), then ListSnapshots `calls` times. */
export async function listRows(many: string, work: string, calls: number, leftovers: string[], launcher: string): Promise<ListResult> {
  const d = await Daemon.start({ many }, ["--store", `file://${path.join(work, "many-store")}`], launcher);
  log(`list: daemon pid ${d.proc.pid}`);
  try {
    const r: ListResult = { files: 0, firstMs: 0, nextMs: [], listed: 0, times: [] };
    for (let i = 0; i < 20; i++) {
      const { run } = await d.client.workspaces.startRun({ workspace: "many", restore: i === 0 ? "NONE" : "LATEST" });
      const { result: fin, ms: took } = await measured(d, () => d.client.workspaces.finishRun({ workspace: "many", runId: run!.id }), `many FinishRun ${i}`);
      if (i === 0) [r.firstMs, r.files] = [took, Number(fin.snapshot!.fileCount)];
      else r.nextMs.push(took);
    }
    log(`list: 20 snapshots of ${r.files} files (the first ${s2(r.firstMs)}, the others median ${s2(median(r.nextMs))})`);
    for (let i = 0; i < calls; i++) {
      const { result: snapshots, ms: took } = await measured(d, async () => (await d.client.workspaces.listSnapshots({ workspace: "many" })).snapshots, `ListSnapshots ${i}`);
      r.times.push(took);
      r.listed = snapshots.length;
    }
    log(`list: ${r.listed} snapshots listed, median ${median(r.times).toFixed(1)} ms, max ${Math.max(...r.times).toFixed(1)} ms`);
    return r;
  } finally {
    await d.stop(false);
    leftovers.push(d.dataDir);
  }
}
