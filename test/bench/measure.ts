// Measuring: wall-clock timing of shell tools and of daemon calls, the daemon
// process and its peak resident memory, the build, ripgrep, and the machine.
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { connect, type FileToolsClient } from "../../clients/ts/src/client.js";
import { LAUNCHER, ROOT, isDistStale, markDistFresh } from "../support/dist.js";

export { ROOT };

/** USER_HZ, the unit of /proc/PID/stat's times: 100 on Linux everywhere (getconf CLK_TCK). */
const CLOCK_TICKS = 100;

/** Tools run in one fixed locale (UTF-8 aware, as the daemon is). */
const TOOL_ENV = { ...process.env, LC_ALL: "C.UTF-8" };

export const ms = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e6;

export function median(xs: number[]): number {
  return quantile(xs, 0.5);
}

/** Nearest-rank quantile. */
export function quantile(xs: number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export interface ToolRun {
  ms: number;
  stdout: string;
}

/** Runs `sh -c cmd` with stdout piped here (so grep cannot treat it as /dev/null); wall time including the spawn. */
export function runTool(cmd: string, cwd?: string): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn("sh", ["-c", cmd], { cwd, env: TOOL_ENV, stdio: ["ignore", "pipe", "ignore"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => chunks.push(d));
    child.on("error", reject);
    child.on("close", () => resolve({ ms: ms(started), stdout: Buffer.concat(chunks).toString("utf8") }));
  });
}

/** Per-run time of a command too quick to time alone: `repeat` runs in one shell loop, output discarded. */
export async function loopTool(cmd: string, repeat: number): Promise<number> {
  const { ms: total } = await runTool(`i=0; while [ $i -lt ${repeat} ]; do ${cmd} >/dev/null; i=$((i+1)); done`);
  return total / repeat;
}

export const lineCount = (text: string) => (text.match(/\n/g) ?? []).length;

/** `s` quoted for sh. */
export const sh = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

// ---- processes ----------------------------------------------------------------

/** A process's resident memory now (VmRSS) or its high-water mark (VmHWM), in bytes. */
export function processMemory(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** CPU time a process has used so far (user + system), in ms; 10 ms resolution (clock ticks). */
export function processCpuMs(pid: number): number {
  // /proc/PID/stat: the fields after the ")" that ends the command name; utime and stime are the 12th and 13th of them.
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

// ---- the daemon -------------------------------------------------------------

/**
 * A fresh directory for a reference extraction (`tar -xzf`), made as a
 * daemon's data directory is (mkdtemp in the temp directory), and left in
 * `leftovers` (removed at the end of the run, never between measures). Where
 * a tree is created weighs as much as how: on an ext4 without a journal
 * (this machine's root), allocating an inode skips every free inode of its
 * group deleted in the last 60 s (300 s when its table block is not written
 * back: the kernel's recently_deleted check), one block lookup each, so a
 * 20,000-file extraction took 2.3 s in a fresh directory of /tmp and 10–25 s
 * in the work directory, whose group held the trees a run had just removed
 * (perf: 55 % of tar's time in recently_deleted). Runs should also start a
 * few minutes after the last one's clean-up.
 */
export function extractionDir(leftovers: string[]): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "ftd-bench-x-"));
  leftovers.push(dir);
  return dir;
}

export class Daemon {
  private constructor(
    readonly proc: ChildProcess,
    readonly client: FileToolsClient,
    readonly dataDir: string,
    /** "127.0.0.1:PORT", for clients in other processes. */
    readonly address: string,
  ) {}

  /**
   * A fresh filetoolsd on 127.0.0.1:0 with its own data dir (removed by stop()),
   * the given binds (NAME → absolute dir) and extra flags, errors-only logging;
   * `launcher` runs another build (another checkout's bin/filetoolsd); `env`
   * is its environment (default: this process's).
   */
  static async start(binds: Record<string, string>, extraArgs: string[] = [], launcher = LAUNCHER, env: NodeJS.ProcessEnv = process.env): Promise<Daemon> {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "ftd-bench-"));
    const args = ["--listen", "127.0.0.1:0", "--data-dir", dataDir, "--log-level", "error", ...extraArgs];
    for (const [name, dir] of Object.entries(binds)) args.push("--bind", `${name}=${dir}`);
    // As deployed: through bin/filetoolsd, with its node flags.
    const proc = spawn(launcher, args, { stdio: ["ignore", "pipe", "pipe"], env });
    let stderr = "";
    proc.stderr!.on("data", (d) => (stderr += d));
    const address = await new Promise<string>((resolve, reject) => {
      let out = "";
      const untilListening = (d: Buffer) => {
        out += d;
        const m = /filetoolsd listening on (\S+)/.exec(out);
        if (!m) return;
        // The log lines after it (--log-level info: one a call) flow on unread, not into a growing string.
        proc.stdout!.off("data", untilListening).resume();
        resolve(m[1]!);
      };
      proc.stdout!.on("data", untilListening);
      proc.on("exit", (code) => {
        rmSync(dataDir, { recursive: true, force: true });
        reject(new Error(`filetoolsd exited ${code}: ${stderr}`));
      });
    });
    return new Daemon(proc, connect(address), dataDir, address);
  }

  private status(field: "VmRSS" | "VmHWM"): number {
    return processMemory(this.proc.pid!, field);
  }

  rss(): number {
    return this.status("VmRSS");
  }

  /** CPU time the process has used so far (user + system), in ms; 10 ms resolution (clock ticks). */
  cpuMs(): number {
    return processCpuMs(this.proc.pid!);
  }

  /**
   * Measures the peak resident memory while `work` runs: the kernel's high-water
   * mark, reset first through clear_refs ("5"), which needs root or ownership;
   * otherwise VmRSS polled every 5 ms.
   */
  async peakDuring<T>(work: () => Promise<T>): Promise<{ result: T; peak: number }> {
    let reset = true;
    try {
      writeFileSync(`/proc/${this.proc.pid}/clear_refs`, "5");
    } catch {
      reset = false;
    }
    let polled = this.rss();
    const timer = reset ? undefined : setInterval(() => (polled = Math.max(polled, this.rss())), 5);
    try {
      const result = await work();
      return { result, peak: Math.max(polled, reset ? this.status("VmHWM") : 0) };
    } finally {
      clearInterval(timer);
    }
  }

  /** SIGTERM, wait for the exit, and remove the data directory unless told to leave it (the caller then removes it). */
  async stop(removeData = true): Promise<void> {
    this.client.close();
    if (this.proc.exitCode === null) {
      const exited = new Promise((r) => this.proc.once("exit", r));
      this.proc.kill("SIGTERM");
      await exited;
    }
    if (removeData) rmSync(this.dataDir, { recursive: true, force: true });
  }
}

// ---- preparation ------------------------------------------------------------

/** `npm run build` when dist is missing or older than a source file. */
export function ensureBuilt(log: (line: string) => void): void {
  if (!isDistStale()) return;
  log("building (npm run build) …");
  execFileSync("npm", ["run", "build"], { cwd: ROOT, stdio: "inherit" });
  markDistFresh();
}

export function version(cmd: string, args = ["--version"]): string | undefined {
  const r = spawnSync(cmd, args, { encoding: "utf8" });
  return r.status === 0 ? r.stdout.split("\n")[0]!.trim() : undefined;
}

/** ripgrep's version, installing the Debian package if missing; undefined (with a note logged) if that fails. */
export function ensureRipgrep(log: (line: string) => void): string | undefined {
  let v = version("rg");
  if (v) return v;
  log("ripgrep missing: apt-get install -y ripgrep …");
  for (const script of ["apt-get install -y ripgrep", "apt-get update && apt-get install -y ripgrep"]) {
    spawnSync("sh", ["-c", `DEBIAN_FRONTEND=noninteractive ${script}`], { stdio: "ignore" });
    if ((v = version("rg"))) return v;
  }
  log("could not install ripgrep: the rg columns are skipped");
  return undefined;
}

/** The 1, 5 and 15 minute load averages: other work on the machine skews every column. */
export const loadAverage = () => os.loadavg().map((l) => l.toFixed(2)).join(" ");

/** Lines describing the machine and the tools' versions. */
export function machine(dataRoot: string, rg: string | undefined): string[] {
  return [...describeMachine(dataRoot), `tools: ${version("sed")}; ${version("tail")}; ${version("grep")}; ${rg ?? "ripgrep: not available"}; LC_ALL=C.UTF-8`];
}

/** Lines describing the machine (CPU, memory, disk, kernel, load), the daemon's commit, and the baseline's (BENCH_BASELINE) if one is set. */
export function describeMachine(dataRoot: string): string[] {
  const cpu = /model name\s*:\s*(.*)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? os.cpus()[0]?.model ?? "?";
  const fs = statfsSync(dataRoot);
  const gib = (n: number) => `${(n / 2 ** 30).toFixed(1)} GiB`;
  const baseline = process.env.BENCH_BASELINE;
  return [
    `machine: ${cpu}, ${os.cpus().length} cores, ${gib(os.totalmem())} RAM, ${gib(fs.bavail * fs.bsize)} free on the data disk; ${os.type()} ${os.release()}; load average ${loadAverage()}`,
    `filetoolsd: ${describeBuild(ROOT)}; node ${process.version}`,
    ...(baseline ? [`baseline (BENCH_BASELINE=${baseline}): ${describeBuild(checkoutOf(baseline))}`] : []),
  ];
}

const gitAt = (root: string, args: string[]) => spawnSync("git", args, { cwd: root, encoding: "utf8" }).stdout?.trim() ?? "";

/** The checkout a launcher (CHECKOUT/bin/filetoolsd) belongs to. */
export const checkoutOf = (launcher: string) => path.dirname(path.dirname(path.resolve(launcher)));

/** The commit of the checkout at `root` ("abc1234 subject", and whether its sources differ from it). */
function describeBuild(root: string): string {
  const dirty = gitAt(root, ["status", "--porcelain", "--untracked-files=no", "server", "gen/ts/src", "clients/ts/src"]) ? " (+ uncommitted changes)" : "";
  return `${gitAt(root, ["log", "-1", "--format=%h %s"]) || "not a git checkout"}${dirty}`;
}

/** The baseline build's column header: "baseline abc1234" (its checkout's commit), or "baseline". */
export function baselineName(): string {
  const launcher = process.env.BENCH_BASELINE;
  const commit = launcher ? gitAt(checkoutOf(launcher), ["log", "-1", "--format=%h"]) : "";
  return commit ? `baseline ${commit}` : "baseline";
}
