// `npm run bench:mcp`: issue 11's targets, through MCP over stdio, side by
// side in one run. One daemon binds the bench data directory as workspace
// "bench"; `filetools mcp` (both profiles) serves it, and the reference
// @modelcontextprotocol/server-filesystem is allowed into the same directory.
//   1. 1,000 sequential read_text_file calls on a 1 KB file, p50/p99: our
//      server-filesystem profile against the reference (target: p50 ≤ 1.5×),
//      our default profile's read, and the same read straight through the
//      TypeScript client (gRPC only: what the MCP hop adds is the difference);
//      with BENCH_BASELINE, the baseline build's profile in the same rounds;
//   2. the 50-line window at line 10,000,000 of the 2 GB file through read:
//      the first call on a fresh daemon (target < 1 s), then windows at other
//      far lines (target < 20 ms); and what the reference does with the need;
//   3. the first 100 matches of a common word over the 20,000-file tree:
//      our search tool against `rg | head -n 100` (the reference has no
//      content search).
// Prints a Markdown table (table.ts), the machine and the load average.
import os from "node:os";
import path from "node:path";
import { mkdirSync, writeFileSync } from "node:fs";
import { CLI, ensureCliBuilt } from "../../clients/ts/test/cli-build.js";
import { BIG_FILE, BIG_LINES, COMMON_WORD, ensureData, prng } from "./data.js";
import { baselineName, checkoutOf, Daemon, describeMachine, ensureBuilt, ensureRipgrep, loadAverage, median, ms, processCpuMs, processMemory, quantile, runTool } from "./measure.js";
import { formatMs, renderTable, type Row } from "./table.js";
import { MCP_SDK, MCP_SERVER, McpStdioServer, ensureMcpServer, type ToolCall } from "./clients/mcp.js";

const DATA = path.resolve(process.env.BENCH_DATA ?? path.join(os.homedir(), ".cache", "filetools-bench"));
const WORKSPACE = "bench";
/** The 1 KB file, as a workspace path (ours) and a host path (the reference's). */
const SMALL = "/mcp-small/small-1k.txt";
const BIG = `/big/${BIG_FILE}`;
const TREE = "/tree";

/** The same 1,024 bytes as bench:clients' file. */
const SMALL_TEXT = Array.from({ length: 40 }, (_, i) => `line ${String(i + 1).padStart(2, "0")}: small file read by every client.\n`).join("").slice(0, 1023) + "\n";

const CALLS = 1000;
/** Untimed calls to each server first: the steady state of a long-lived process (bench:clients' WARMUP_CALLS). */
const WARMUP = 2000;
/** Calls are made in rounds that alternate between the servers, so that load on the shared machine falls on all of them alike. */
const ROUNDS = 5;
const WINDOW_LINE = 10_000_000;
const WINDOW_LINES = 50;
const FIRST_WINDOW_DAEMONS = 3;
const FAR_WINDOWS = 20;
const SEARCH_ROUNDS = 5;
const SEARCH_RESULTS = 100;
/** How long the reference may take over the 2 GB file. */
const REFERENCE_BIG_TIMEOUT_MS = 180_000;

const log = (line: string) => console.log(line);
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const host = (workspacePath: string) => path.join(DATA, workspacePath);

/** Node flags for our MCP server processes, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to see where a call's time goes. */
const OUR_NODE_FLAGS = (process.env.BENCH_MCP_NODE_FLAGS ?? "").split(" ").filter(Boolean);

/** `filetools --address A mcp --workspace bench [extra…]`, the built CLI over stdio, as a host starts it. */
const startOurs = (daemon: Daemon, ...extra: string[]) => startCli(CLI, daemon, ...extra);
const startCli = (cli: string, daemon: Daemon, ...extra: string[]) =>
  McpStdioServer.start(process.execPath, [...OUR_NODE_FLAGS, cli, "--address", daemon.address, "mcp", "--workspace", WORKSPACE, ...extra]);

/**
 * With BENCH_BASELINE (another checkout's bin/filetoolsd, built): that build's daemon (with `daemonArgs`) and MCP
 * server (its clients/ts CLI, with `mcpArgs`), for the baseline column of the small-read and search rows.
 */
async function startBaseline(daemonArgs: string[] = [], ...mcpArgs: string[]): Promise<{ daemon: Daemon; mcp: McpStdioServer } | undefined> {
  const launcher = process.env.BENCH_BASELINE;
  if (!launcher) return undefined;
  const daemon = await Daemon.start({ [WORKSPACE]: DATA }, daemonArgs, launcher);
  return { daemon, mcp: await startCli(path.join(checkoutOf(launcher), "clients/ts/dist/cli/main.js"), daemon, ...mcpArgs) };
}

async function main(): Promise<void> {
  ensureBuilt(log);
  ensureCliBuilt();
  const { manifest } = ensureData(DATA, log);
  const rg = ensureRipgrep(log);
  const referenceEntry = ensureMcpServer(path.join(DATA, "mcp"), log);
  mkdirSync(host("/mcp-small"), { recursive: true });
  writeFileSync(host(SMALL), SMALL_TEXT);

  log("");
  for (const line of describeMachine(DATA)) log(line);
  log(`reference: ${MCP_SERVER} (${MCP_SDK}), \`node …/server-filesystem/dist/index.js ${DATA}\`; ours: \`node ${path.relative(process.cwd(), CLI)} --address … mcp --workspace ${WORKSPACE} [--profile server-filesystem]\`; both over stdio through a minimal JSON-RPC client`);
  log(`data: ${DATA} bound as workspace "${WORKSPACE}": ${SMALL} (1,024 bytes); ${BIG} (${manifest.big!.bytes.toLocaleString("en")} bytes, ${BIG_LINES.toLocaleString("en")} lines); ${TREE} (${manifest.tree!.files.toLocaleString("en")} files); ${rg ?? "ripgrep: not available"}`);

  const only = process.env.BENCH_ONLY; // "small", "window" or "search": one part, while working on it
  const rows: Row[] = [];
  if (!only || only === "small") rows.push(...(await smallReadRows(referenceEntry)));
  if (!only || only === "window") rows.push(...(await windowRows(referenceEntry)));
  if (!only || only === "search") rows.push(...(await searchRows(rg)));
  log("");
  log(renderTable(rows, baselineName()));
  log(`\nload average at the end: ${loadAverage()}`);
  log("\nfiletoolsd column: our server (`filetools mcp` on the daemon), through MCP over stdio; ratio = ours / the other (below 1: ours is faster).");
}

// ---- 1. small reads -------------------------------------------------------

interface Timed {
  label: string;
  /** One call; resolves to the text it returned, checked by `check`. */
  call: () => Promise<string>;
  check: (text: string) => boolean;
  /** The process whose CPU time a call costs besides the daemon's (the MCP server), if any. */
  pid?: number;
  samples: number[];
  cpuMs: number;
}

async function smallReadRows(referenceEntry: string): Promise<Row[]> {
  const asDeployed = ["--log-level", "info"]; // one log line per call
  const daemon = await Daemon.start({ [WORKSPACE]: DATA }, asDeployed);
  const reference = await McpStdioServer.filesystem(referenceEntry, DATA);
  const profile = await startOurs(daemon, "--profile", "server-filesystem");
  const native = await startOurs(daemon);
  const baseline = await startBaseline(asDeployed, "--profile", "server-filesystem");
  const direct = daemon.client.workspace(WORKSPACE);
  const text = async (result: Promise<ToolCall>) => {
    const r = await result;
    if (r.isError) throw new Error(r.text);
    return r.text;
  };
  const whole = (t: string) => t === SMALL_TEXT;
  const timed: Timed[] = [
    { label: "reference", call: () => text(reference.callTool("read_text_file", { path: host(SMALL) })), check: whole, pid: reference.pid, samples: [], cpuMs: 0 },
    { label: "profile", call: () => text(profile.callTool("read_text_file", { path: SMALL })), check: whole, pid: profile.pid, samples: [], cpuMs: 0 },
    {
      label: "native",
      call: () => text(native.callTool("read", { path: SMALL })),
      check: (t) => t.startsWith("     1\tline 01: ") && t.endsWith("    25\tline 25: small \n"),
      pid: native.pid,
      samples: [],
      cpuMs: 0,
    },
    // What the profile's read_text_file asks the daemon, from this process: the gRPC part of the MCP server's call.
    { label: "direct", call: async () => (await direct.readText(SMALL, { maxBytes: 1 << 20 })).text, check: whole, samples: [], cpuMs: 0 },
    // The baseline build's profile on its own daemon, in the same rounds.
    ...(baseline ? [{ label: "baseline", call: () => text(baseline.mcp.callTool("read_text_file", { path: SMALL })), check: whole, pid: baseline.mcp.pid, samples: [], cpuMs: 0 }] : []),
  ];
  const daemonCpu = new Map<string, number>();
  let peak = 0;
  try {
    log(`small reads: ${WARMUP} warm-up calls each, then ${CALLS} timed in ${ROUNDS} alternating rounds …`);
    for (const t of timed) for (let i = 0; i < WARMUP; i++) if (!t.check(await t.call())) throw new Error(`${t.label}: unexpected text`);
    const { peak: p } = await daemon.peakDuring(async () => {
      for (let round = 0; round < ROUNDS; round++) {
        for (const t of timed) {
          const cpu = t.pid === undefined ? 0 : processCpuMs(t.pid);
          const itsDaemon = t.label === "baseline" ? baseline!.daemon : daemon;
          const daemonBefore = itsDaemon.cpuMs();
          for (let i = 0; i < CALLS / ROUNDS; i++) {
            const started = process.hrtime.bigint();
            const result = await t.call();
            t.samples.push(ms(started));
            if (!t.check(result)) throw new Error(`${t.label}: unexpected text`);
          }
          daemonCpu.set(t.label, (daemonCpu.get(t.label) ?? 0) + itsDaemon.cpuMs() - daemonBefore);
          if (t.pid !== undefined) t.cpuMs += processCpuMs(t.pid) - cpu;
        }
      }
    });
    peak = p;
    const rss = (s: McpStdioServer) => mib(processMemory(s.pid, "VmHWM"));
    log(`  peak RSS: reference ${rss(reference)}, our profile ${rss(profile)}, our default ${rss(native)} (the MCP processes), daemon ${mib(peak)}`);
  } finally {
    await Promise.all([reference, profile, native, ...(baseline ? [baseline.mcp] : [])].map((s) => s.stop()));
    await daemon.stop();
    await baseline?.daemon.stop();
  }
  const [ref, prof, nat, dir, base] = timed as [Timed, Timed, Timed, Timed, Timed | undefined];
  const perCall = (total: number) => `${(total / CALLS).toFixed(2)} ms/call`;
  const baselineNote = base ? `; baseline: MCP server ${perCall(base.cpuMs)}, daemon ${perCall(daemonCpu.get("baseline")!)}` : "";
  const cpu = (t: Timed) => `CPU: MCP server ${perCall(t.cpuMs)}, daemon ${perCall(daemonCpu.get(t.label)!)}`;
  const p = (t: Timed, q: number) => quantile(t.samples, q);
  const vs = (q: number) => [{ tool: `reference read_text_file ${q === 0.5 ? "p50" : "p99"}`, ms: p(ref, q) }];
  const n = CALLS.toLocaleString("en");
  return [
    {
      name: `1 KB read_text_file, ${n} sequential: p50, --profile server-filesystem`,
      daemon: p(prof, 0.5),
      tools: vs(0.5),
      peakRss: peak,
      baseline: base && p(base, 0.5),
      note: `target ≤ 1.5; ${cpu(prof)}; reference's own CPU ${perCall(ref.cpuMs)}${baselineNote}`,
    },
    { name: `1 KB read_text_file, ${n} sequential: p99, --profile server-filesystem`, daemon: p(prof, 0.99), tools: vs(0.99), baseline: base && p(base, 0.99) },
    { name: `1 KB read (default profile), ${n} sequential: p50`, daemon: p(nat, 0.5), tools: vs(0.5), note: `numbered lines; ${cpu(nat)}` },
    { name: `1 KB read (default profile), ${n} sequential: p99`, daemon: p(nat, 0.99), tools: vs(0.99) },
    {
      name: `1 KB readText straight over gRPC (no MCP), ${n} sequential: p50`,
      daemon: p(dir, 0.5),
      tools: vs(0.5),
      note: `the TypeScript client in the benchmark's process: the gRPC part of the profile's call; daemon CPU ${perCall(daemonCpu.get("direct")!)}`,
    },
    { name: `1 KB readText straight over gRPC (no MCP), ${n} sequential: p99`, daemon: p(dir, 0.99), tools: vs(0.99) },
  ];
}

// ---- 2. a window deep in the 2 GB file ------------------------------------

/** A read of `line_count` 50 at `line`, checked: 50 numbered lines, the first being `line` (the file's lines start with their number). */
async function window(server: McpStdioServer, line: number): Promise<number> {
  const started = process.hrtime.bigint();
  const result = await server.callTool("read", { path: BIG, start_line: line, line_count: WINDOW_LINES });
  const took = ms(started);
  const lines = result.text.split("\n");
  const numbered = (i: number) => lines[i]?.trimStart().startsWith(`${line + i}\t${line + i} `);
  if (result.isError || !numbered(0) || !numbered(WINDOW_LINES - 1)) throw new Error(`read at ${line}: unexpected text ${result.text.slice(0, 200)}`);
  return took;
}

async function windowRows(referenceEntry: string): Promise<Row[]> {
  log(`warming the page cache: cat ${BIG_FILE} …`);
  await runTool(`cat '${host(BIG)}' > /dev/null`);
  const rows: Row[] = [];
  const firsts: number[] = [];
  const firstCpu: number[] = [];
  const peaks: number[] = [];
  let farFirst: number[] = [];
  let farAgain: number[] = [];
  let farPeak = 0;
  const rnd = prng(11);
  const farLines = Array.from({ length: FAR_WINDOWS }, () => 1 + (rnd() % (BIG_LINES - WINDOW_LINES)));
  for (let d = 0; d < FIRST_WINDOW_DAEMONS; d++) {
    log(`window at line ${WINDOW_LINE.toLocaleString("en")}: fresh daemon ${d + 1} of ${FIRST_WINDOW_DAEMONS} …`);
    const daemon = await Daemon.start({ [WORKSPACE]: DATA });
    const ours = await startOurs(daemon);
    try {
      await ours.callTool("read", { path: "/big/warmup.txt" }); // the MCP server's gRPC connection, opened
      const cpu = daemon.cpuMs();
      const { result, peak } = await daemon.peakDuring(() => window(ours, WINDOW_LINE));
      firstCpu.push(daemon.cpuMs() - cpu);
      firsts.push(result);
      peaks.push(peak);
      if (d === FIRST_WINDOW_DAEMONS - 1) {
        log(`${FAR_WINDOWS} windows at random lines, twice …`);
        const far = await daemon.peakDuring(async () => {
          for (const line of farLines) farFirst.push(await window(ours, line));
          for (const line of farLines) farAgain.push(await window(ours, line));
        });
        farPeak = far.peak;
      }
    } finally {
      await ours.stop();
      await daemon.stop();
    }
  }
  const first = median(firsts);
  const beyond = farLines.filter((l) => l > WINDOW_LINE).length;
  const slow = (xs: number[]) => {
    const which = farLines.flatMap((line, i) => (xs[i]! >= 20 ? [`${line.toLocaleString("en")} (${formatMs(xs[i]!)})`] : []));
    return which.length === 0 ? "none took ≥ 20 ms" : `≥ 20 ms at line ${which.join(", ")}`;
  };
  const target = (label: string, ms: number) => [{ tool: label, ms }];
  rows.push({
    name: `read 50 lines @ line 10,000,000: first call (fresh daemon, cold index; median of ${FIRST_WINDOW_DAEMONS})`,
    daemon: first,
    tools: target("target 1 s", 1000),
    peakRss: Math.max(...peaks),
    note: `each: ${firsts.map(formatMs).join(", ")} (daemon CPU ${firstCpu.map(formatMs).join(", ")}); 50 lines checked`,
  });
  rows.push({
    name: `read 50 lines @ ${FAR_WINDOWS} random lines, first visit: p50`,
    daemon: median(farFirst),
    tools: target("target 20 ms", 20),
    peakRss: farPeak,
    note: `${beyond} of ${FAR_WINDOWS} lie beyond line 10,000,000 (past what the first read indexed); ${slow(farFirst)}`,
  });
  rows.push({ name: `read 50 lines @ ${FAR_WINDOWS} random lines, first visit: max`, daemon: Math.max(...farFirst), tools: target("target 20 ms", 20) });
  rows.push({ name: `read 50 lines @ the same ${FAR_WINDOWS} lines again: p50`, daemon: median(farAgain), tools: target("target 20 ms", 20), note: slow(farAgain) });
  rows.push({ name: `read 50 lines @ the same ${FAR_WINDOWS} lines again: max`, daemon: Math.max(...farAgain), tools: target("target 20 ms", 20) });

  // The reference has read_text_file with head or tail, or the whole file: the window needs the whole file, or its first 10,000,049 lines.
  log(`reference over ${BIG_FILE}: whole file, then head ${(WINDOW_LINE + WINDOW_LINES - 1).toLocaleString("en")} (timeout ${REFERENCE_BIG_TIMEOUT_MS / 1000} s each) …`);
  const attempts: Array<{ label: string; args: object }> = [
    { label: "reference read_text_file (whole file)", args: { path: host(BIG) } },
    { label: `reference read_text_file head ${WINDOW_LINE + WINDOW_LINES - 1}`, args: { path: host(BIG), head: WINDOW_LINE + WINDOW_LINES - 1 } },
  ];
  const outcomes: Array<{ label: string; ms: number; what: string; failed: boolean }> = [];
  for (const attempt of attempts) {
    const reference = await McpStdioServer.filesystem(referenceEntry, DATA);
    const started = process.hrtime.bigint();
    let what: string;
    let failed = true;
    try {
      const result = await reference.callTool("read_text_file", attempt.args, REFERENCE_BIG_TIMEOUT_MS);
      failed = result.isError;
      what = result.isError ? `error: ${result.text.slice(0, 160)}` : `${result.text.length.toLocaleString("en")} characters`;
    } catch (error) {
      what = error instanceof Error ? error.message : String(error);
    }
    const took = ms(started);
    let rss = "";
    try {
      rss = `, peak RSS ${mib(processMemory(reference.pid, "VmHWM"))}`;
    } catch {
      rss = reference.exited ? ` (process ${reference.exited})` : "";
    }
    outcomes.push({ label: attempt.label, ms: took, what: `${what}${rss}`, failed });
    log(`  ${attempt.label}: ${formatMs(took)}: ${what}${rss}`);
    await reference.stop();
  }
  rows.push({
    name: "the same need through the reference server (head/tail/whole file only)",
    daemon: first,
    // No ratio against a failure: the time goes into the cell's text.
    tools: outcomes.map((o) => (o.failed ? { tool: o.label, missing: `failed after ${formatMs(o.ms)}` } : { tool: o.label, ms: o.ms })),
    note: outcomes.map((o) => `${o.label.replace("reference read_text_file ", "")}: ${o.what}`).join("; "),
  });
  return rows;
}

// ---- 3. content search ----------------------------------------------------

async function searchRows(rg: string | undefined): Promise<Row[]> {
  const daemon = await Daemon.start({ [WORKSPACE]: DATA });
  const ours = await startOurs(daemon);
  const baseline = await startBaseline();
  const baselineTimes: number[] = [];
  const direct = daemon.client.workspace(WORKSPACE);
  const rgCommand = `rg -n -j2 --no-require-git -F ${COMMON_WORD} '${host(TREE)}' | head -n ${SEARCH_RESULTS}`;
  const args = { pattern: COMMON_WORD, path: TREE, fixed_strings: true, max_results: SEARCH_RESULTS };
  const oursTimes: number[] = [];
  const directTimes: number[] = [];
  const rgTimes: number[] = [];
  let peak = 0;
  let found = { ours: 0, direct: 0, rg: 0 };
  let daemonCpu = 0;
  let oursCpu = 0;
  try {
    log(`search "${COMMON_WORD}", first ${SEARCH_RESULTS} matches: a warm-up each, then ${SEARCH_ROUNDS} interleaved rounds …`);
    const runOn = async (server: McpStdioServer) => {
      const started = process.hrtime.bigint();
      const result = await server.callTool("search", args);
      const took = ms(started);
      if (result.isError) throw new Error(result.text);
      return { took, count: (result.structured?.matches as unknown[] | undefined)?.length ?? 0 };
    };
    const runOurs = () => runOn(ours);
    const runDirect = async () => {
      const started = process.hrtime.bigint();
      let count = 0;
      for await (const _ of direct.search(COMMON_WORD, { path: TREE, fixedStrings: true, maxResults: SEARCH_RESULTS })) count++;
      return { took: ms(started), count };
    };
    const runRg = async () => {
      const r = await runTool(rgCommand);
      return { took: r.ms, count: r.stdout.split("\n").filter(Boolean).length };
    };
    await runOurs();
    await runDirect();
    if (rg) await runRg();
    if (baseline) await runOn(baseline.mcp);
    const { peak: p } = await daemon.peakDuring(async () => {
      for (let i = 0; i < SEARCH_ROUNDS; i++) {
        const cpu = daemon.cpuMs();
        const mcpCpu = processCpuMs(ours.pid);
        const o = await runOurs();
        daemonCpu += daemon.cpuMs() - cpu;
        oursCpu += processCpuMs(ours.pid) - mcpCpu;
        oursTimes.push(o.took);
        const d = await runDirect();
        directTimes.push(d.took);
        found = { ...found, ours: o.count, direct: d.count };
        if (rg) {
          const r = await runRg();
          rgTimes.push(r.took);
          found.rg = r.count;
        }
        if (baseline) baselineTimes.push((await runOn(baseline.mcp)).took);
      }
    });
    peak = p;
  } finally {
    await ours.stop();
    await daemon.stop();
    await baseline?.mcp.stop();
    await baseline?.daemon.stop();
  }
  return [
    {
      name: `search "${COMMON_WORD}" over the tree, first ${SEARCH_RESULTS} matches (median of ${SEARCH_ROUNDS})`,
      daemon: median(oursTimes),
      tools: [
        rg ? { tool: `rg -n -j2 --no-require-git -F | head -n ${SEARCH_RESULTS}`, ms: median(rgTimes) } : { tool: "rg", missing: "not installed" },
        { tool: "reference", missing: "no content search (search_files matches names)" },
      ],
      peakRss: peak,
      baseline: baseline ? median(baselineTimes) : undefined,
      note: `matches ours/rg: ${found.ours}/${found.rg}; the same Search straight over gRPC: ${formatMs(median(directTimes))}; CPU per search: daemon ${formatMs(daemonCpu / SEARCH_ROUNDS)}, MCP server ${formatMs(oursCpu / SEARCH_ROUNDS)}`,
    },
  ];
}

await main();
