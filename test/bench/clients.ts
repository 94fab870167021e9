// `npm run bench:clients`: issue 5's client benchmark. One daemon, and the
// TypeScript, Python and Go clients each in its own process (the drivers in
// clients/), side by side in one run:
//   - latency: 1,000 sequential Reads of a 1 KB file, p50/p99, against the MCP
//     filesystem server's read_text_file over stdio;
//   - streaming: a 1 GB text file through Read, in windows of the daemon's
//     default ceiling (64 MiB), against the target MB/s;
//   - throughput: 32 concurrent small Reads, against 5,000 calls/s;
// with the daemon's peak RSS and CPU time per row. Prints a Markdown table.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, ftruncateSync, openSync, readFileSync, readSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { BIG_FILE, ensureData } from "./data.js";
import { Daemon, ROOT, describeMachine, ensureBuilt, loadAverage, median, quantile, runTool, version } from "./measure.js";
import { formatMs, renderTable, type Row } from "./table.js";
import { MCP_SDK, MCP_SERVER, McpStdioServer, ensureMcpServer } from "./clients/mcp.js";
// @ts-expect-error: a plain ES module without type declarations
import { VENV_PYTHON, ensureVenv } from "../../scripts/toolchain.mjs";

const DATA = path.resolve(process.env.BENCH_DATA ?? path.join(os.homedir(), ".cache", "filetools-bench"));
/** The workspace the daemon serves (bound as "bench") and the MCP server may read. */
const WORKSPACE_DIR = path.join(DATA, "clients");
const SMALL_FILE = "small-1k.txt";
const BIG_TEXT_FILE = "text-1g.txt";
const BIG_TEXT_BYTES = 1_000_000_000;

const LATENCY_CALLS = 1000;
/**
 * Untimed calls each client (and the MCP reference) makes first, so that the
 * timed ones measure a long-lived process: after 200, the TypeScript client
 * was still being compiled by V8 (p50 0.94-1.10 ms against 0.71-0.73 after
 * 2,000, same daemon, quiet machine).
 */
const WARMUP_CALLS = 2000;
/** Untimed calls on the fresh daemon before the first latency row. */
const DAEMON_WARMUP_CALLS = 3000;
const CONCURRENCY = 32;
const CONCURRENT_CALLS = 20_000;
/** The daemon's default --max-read-bytes: an agent pages through a big file in windows of at most this. */
const WINDOW_BYTES = 64 * 2 ** 20;
const STREAM_TARGET_MB_PER_S = { TypeScript: 500, Python: 250, Go: 500 } as const;
const CALLS_PER_S_TARGET = 5000;

const log = (line: string) => console.log(line);
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

type ClientName = keyof typeof STREAM_TARGET_MB_PER_S;

interface Driver {
  client: ClientName;
  command: string[];
  env?: NodeJS.ProcessEnv;
  /** Why this client cannot run here. */
  missing?: string;
}

/** What every driver takes (see clients/read_bench.ts). */
interface Job {
  scenario: "latency" | "stream" | "concurrent";
  path: string;
  calls?: number;
  concurrency?: number;
}

interface LatencyResult {
  samplesMs: number[];
  bytes: number;
}
interface StreamResult {
  seconds: number;
  bytes: number;
  lines: number;
  windows: number;
}
interface ConcurrentResult {
  seconds: number;
  calls: number;
  bytes: number;
}

async function main(): Promise<void> {
  ensureBuilt(log);
  const { manifest } = ensureData(DATA, log);
  const big = prepareWorkspace(manifest.big!.bytes);
  const mcpEntry = ensureMcpServer(path.join(DATA, "mcp"), log);
  const drivers = prepareDrivers();
  log("");
  for (const line of describeMachine(DATA)) log(line);
  for (const line of clientVersions(drivers)) log(line);
  log(`data: ${WORKSPACE_DIR}: ${SMALL_FILE} (1,024 bytes), ${BIG_TEXT_FILE} (${big.bytes.toLocaleString("en")} bytes, ${big.lines.toLocaleString("en")} lines)`);

  // The daemon as deployed (info logging: one line per call), plus the workspace. BENCH_DAEMON: another
  // build's bin/filetoolsd (e.g. a checkout of the commit before a change), for a before/after with the same clients.
  const launcher = process.env.BENCH_DAEMON;
  if (launcher) log(`daemon: ${launcher}`);
  const daemon = await Daemon.start({ bench: WORKSPACE_DIR }, ["--log-level", "info"], launcher);
  const rows: Row[] = [];
  try {
    log(`daemon started, idle RSS ${mib(daemon.rss())}`);
    const only = process.env.BENCH_ONLY; // "latency", "stream" or "throughput": one part, while working on it
    if (!only || only === "latency") rows.push(...(await latencyRows(daemon, drivers, mcpEntry)));
    if (!only || only === "stream") rows.push(...(await streamRows(daemon, drivers, big)));
    if (!only || only === "throughput") rows.push(...(await throughputRows(daemon, drivers)));
  } finally {
    await daemon.stop();
  }
  log("");
  log(renderTable(rows));
  log(`\nload average at the end: ${loadAverage()}`);
  log("\nratio = client time / reference time (below 1: faster than MCP, or better than the target).");
  log("Each client runs in its own process against one daemon on loopback; MB = 10^6 bytes.");
}

// ---- data and drivers -------------------------------------------------------

/** The 1 KB file, and the first 1 GB of the big file cut at a line end (made once; its lines are numbered, so the last number is the count). */
function prepareWorkspace(sourceBytes: number): { bytes: number; lines: number } {
  execFileSync("mkdir", ["-p", WORKSPACE_DIR]);
  const small = Array.from({ length: 40 }, (_, i) => `line ${String(i + 1).padStart(2, "0")}: small file read by every client.\n`).join("");
  writeFileSync(path.join(WORKSPACE_DIR, SMALL_FILE), small.slice(0, 1023) + "\n");

  const target = path.join(WORKSPACE_DIR, BIG_TEXT_FILE);
  const source = path.join(DATA, "big", BIG_FILE);
  if (!existsSync(target) || statSync(target).mtimeMs < statSync(source).mtimeMs) {
    if (sourceBytes < BIG_TEXT_BYTES) throw new Error(`${source} is smaller than ${BIG_TEXT_BYTES} bytes`);
    log(`cutting ${target} from ${source} …`);
    execFileSync("head", ["-c", String(BIG_TEXT_BYTES), source], { stdio: ["ignore", openSync(target, "w"), "inherit"] });
    const fd = openSync(target, "r+");
    try {
      ftruncateSync(fd, lastLineEnd(fd, BIG_TEXT_BYTES) + 1);
    } finally {
      closeSync(fd);
    }
  }
  const bytes = statSync(target).size;
  const fd = openSync(target, "r");
  try {
    const tail = Buffer.alloc(64 * 1024);
    const n = readSync(fd, tail, 0, tail.length, bytes - tail.length);
    const lastLine = tail.subarray(0, n - 1).toString("latin1");
    return { bytes, lines: Number(lastLine.slice(lastLine.lastIndexOf("\n") + 1).split(" ")[0]) };
  } finally {
    closeSync(fd);
  }
}

function lastLineEnd(fd: number, size: number): number {
  const tail = Buffer.alloc(64 * 1024);
  const n = readSync(fd, tail, 0, tail.length, size - tail.length);
  return size - n + tail.subarray(0, n).lastIndexOf(0x0a);
}

function prepareDrivers(): Driver[] {
  const dir = path.join(ROOT, "test/bench/clients");
  // The pinned .venv that npm test uses, made (or brought up to date) here: the Python row needs no setup by hand.
  let venvProblem: string | undefined;
  try {
    ensureVenv();
  } catch (error) {
    venvProblem = `the Python environment could not be set up: ${(error as Error).message}`;
  }
  const python: string = VENV_PYTHON;
  const goBinary = path.join(DATA, "read-bench-go");
  const goBuild = spawnSync("go", ["build", "-o", goBinary, "."], { cwd: path.join(dir, "go"), encoding: "utf8" });
  return [
    { client: "TypeScript", command: [process.execPath, "--import", "tsx", path.join(dir, "read_bench.ts")] },
    {
      client: "Python",
      command: [python, path.join(dir, "read_bench.py")],
      env: { ...process.env, PYTHONPATH: path.join(ROOT, "clients/python/src") },
      missing: venvProblem,
    },
    { client: "Go", command: [goBinary], missing: goBuild.status === 0 ? undefined : `go build failed: ${goBuild.error ?? goBuild.stderr}` },
  ];
}

function clientVersions(drivers: Driver[]): string[] {
  const pkg = (dir: string) => JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")).version as string;
  const python = drivers.find((d) => d.client === "Python")!;
  const pythonVersions = python.missing
    ? python.missing
    : spawnSync(python.command[0]!, ["-c", "import sys, grpc, google.protobuf as p; print(sys.version.split()[0], 'grpcio', grpc.__version__, 'protobuf', p.__version__)"], {
        encoding: "utf8",
      }).stdout.trim();
  const goMod = readFileSync(path.join(ROOT, "clients/go/go.mod"), "utf8");
  return [
    `clients: TypeScript (node ${process.version}, @grpc/grpc-js ${pkg(path.join(ROOT, "node_modules/@grpc/grpc-js"))}); ` +
      `Python ${pythonVersions}; ${version("go", ["version"]) ?? "go: not available"}, grpc-go ${/google\.golang\.org\/grpc (\S+)/.exec(goMod)?.[1]}`,
    `reference: ${MCP_SERVER} (${MCP_SDK}) over stdio, read_text_file, through a minimal JSON-RPC client`,
  ];
}

/** Runs a driver on `job`; resolves to the JSON it prints. */
function runDriver<T>(driver: Driver, daemon: Daemon, job: Job): Promise<T> {
  const full = { address: daemon.address, workspace: "bench", calls: 0, warmup: WARMUP_CALLS, concurrency: 1, windowBytes: WINDOW_BYTES, ...job };
  return new Promise((resolve, reject) => {
    const [command, ...args] = driver.command;
    const child = spawn(command!, [...args, JSON.stringify(full)], { cwd: ROOT, env: driver.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(JSON.parse(stdout) as T);
      else reject(new Error(`${driver.client} driver (${job.scenario}) exited ${code}: ${stderr}`));
    });
  });
}

/** Runs a driver while measuring the daemon's peak RSS and CPU time. */
async function measured<T>(daemon: Daemon, driver: Driver, job: Job): Promise<{ result: T; peak: number; cpuMs: number }> {
  const cpuBefore = daemon.cpuMs();
  const { result, peak } = await daemon.peakDuring(() => runDriver<T>(driver, daemon, job));
  return { result, peak, cpuMs: daemon.cpuMs() - cpuBefore };
}

const missingRow = (name: string, driver: Driver): Row => ({ name, daemon: `n/a (${driver.missing})`, tools: [] });

// ---- the benchmarks ---------------------------------------------------------

async function latencyRows(daemon: Daemon, drivers: Driver[], mcpEntry: string): Promise<Row[]> {
  log(`latency: MCP read_text_file, ${LATENCY_CALLS} calls …`);
  const mcp = await mcpLatency(mcpEntry);
  const reference = (q: number) => ({ tool: `MCP read_text_file ${q === 0.5 ? "p50" : "p99"}`, ms: quantile(mcp, q) });
  const rows: Row[] = [];
  // A fresh daemon compiles its hot paths over its first few thousand calls: warm it first (untimed),
  // or the first client measured pays for it (measured: ~0.2 ms of p50, ~0.4 ms of daemon CPU per call).
  const warming = drivers.find((d) => !d.missing);
  if (warming) await runDriver(warming, daemon, { scenario: "latency", path: SMALL_FILE, calls: DAEMON_WARMUP_CALLS });
  for (const driver of drivers) {
    const name = (q: string) => `1 KB Read, ${LATENCY_CALLS.toLocaleString("en")} sequential: ${q}, ${driver.client}`;
    if (driver.missing) {
      rows.push(missingRow(name("p50"), driver));
      continue;
    }
    log(`latency: ${driver.client}, ${LATENCY_CALLS} calls …`);
    // The daemon's CPU time covers the warm-up calls too.
    const { result, peak, cpuMs } = await measured<LatencyResult>(daemon, driver, { scenario: "latency", path: SMALL_FILE, calls: LATENCY_CALLS });
    if (result.bytes !== 1024 || result.samplesMs.length !== LATENCY_CALLS) throw new Error(`${driver.client}: ${result.bytes} bytes, ${result.samplesMs.length} samples`);
    const cpu = `daemon CPU ${(cpuMs / (LATENCY_CALLS + WARMUP_CALLS)).toFixed(2)} ms/call`;
    rows.push({ name: name("p50"), daemon: median(result.samplesMs), tools: [reference(0.5)], peakRss: peak, note: `1,024 bytes each; ${cpu}` });
    rows.push({ name: name("p99"), daemon: quantile(result.samplesMs, 0.99), tools: [reference(0.99)] });
  }
  return rows;
}

/** Per-call times of read_text_file on the 1 KB file, after a warm-up. */
async function mcpLatency(entryPoint: string): Promise<number[]> {
  const server = await McpStdioServer.filesystem(entryPoint, WORKSPACE_DIR);
  const file = path.join(WORKSPACE_DIR, SMALL_FILE);
  try {
    for (let i = 0; i < WARMUP_CALLS; i++) await server.readTextFile(file);
    const samples: number[] = [];
    for (let i = 0; i < LATENCY_CALLS; i++) {
      const started = process.hrtime.bigint();
      const text = await server.readTextFile(file);
      samples.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (text.length !== 1024) throw new Error(`MCP read_text_file returned ${text.length} characters`);
    }
    return samples;
  } finally {
    await server.stop();
  }
}

async function streamRows(daemon: Daemon, drivers: Driver[], big: { bytes: number; lines: number }): Promise<Row[]> {
  log(`warming the page cache: cat ${BIG_TEXT_FILE} …`);
  await runTool(`cat '${path.join(WORKSPACE_DIR, BIG_TEXT_FILE)}' > /dev/null`);
  const rows: Row[] = [];
  for (const driver of drivers) {
    const name = `1 GB text file through Read, ${driver.client}`;
    if (driver.missing) {
      rows.push(missingRow(name, driver));
      continue;
    }
    log(`streaming: ${driver.client} …`);
    const { result, peak, cpuMs } = await measured<StreamResult>(daemon, driver, { scenario: "stream", path: BIG_TEXT_FILE });
    if (result.bytes !== big.bytes || result.lines !== big.lines) {
      throw new Error(`${driver.client}: got ${result.bytes} bytes in ${result.lines} lines, expected ${big.bytes} in ${big.lines}`);
    }
    const target = STREAM_TARGET_MB_PER_S[driver.client];
    const mbPerS = result.bytes / 1e6 / result.seconds;
    rows.push({
      name,
      daemon: result.seconds * 1000,
      tools: [{ tool: `target ${target} MB/s`, ms: (result.bytes / 1e6 / target) * 1000 }],
      peakRss: peak,
      note: `${mbPerS.toFixed(0)} MB/s; ${result.windows} windows of ≤ 64 MiB; bytes and lines checked; daemon CPU ${formatMs(cpuMs)}`,
    });
  }
  return rows;
}

async function throughputRows(daemon: Daemon, drivers: Driver[]): Promise<Row[]> {
  const rows: Row[] = [];
  for (const driver of drivers) {
    const name = `${CONCURRENCY} concurrent 1 KB Reads, ${driver.client}`;
    if (driver.missing) {
      rows.push(missingRow(name, driver));
      continue;
    }
    log(`throughput: ${driver.client}, ${CONCURRENT_CALLS} calls, ${CONCURRENCY} in flight …`);
    const job: Job = { scenario: "concurrent", path: SMALL_FILE, calls: CONCURRENT_CALLS, concurrency: CONCURRENCY };
    const { result, peak, cpuMs } = await measured<ConcurrentResult>(daemon, driver, job);
    if (result.bytes !== 1024 * CONCURRENT_CALLS) throw new Error(`${driver.client}: ${result.bytes} bytes over ${CONCURRENT_CALLS} calls`);
    rows.push({
      name,
      daemon: result.seconds * 1000,
      tools: [{ tool: `target ${CALLS_PER_S_TARGET.toLocaleString("en")} calls/s`, ms: (CONCURRENT_CALLS / CALLS_PER_S_TARGET) * 1000 }],
      peakRss: peak,
      note: `${Math.round(CONCURRENT_CALLS / result.seconds).toLocaleString("en")} calls/s over ${CONCURRENT_CALLS.toLocaleString("en")} calls; daemon CPU ${(cpuMs / (CONCURRENT_CALLS + WARMUP_CALLS)).toFixed(2)} ms/call`,
    });
  }
  return rows;
}

await main();
