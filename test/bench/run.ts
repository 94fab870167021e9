// `npm run bench`: build if needed, install ripgrep if missing, generate the
// data once (BENCH_DATA, default ~/.cache/filetools-bench), then time the
// daemon (through the TypeScript client) against sed, tail, head, ripgrep and
// grep in one run and print a table of ratios (daemon time / tool time).
// Page cache: warm for every tool (the big file is read once with cat, and each
// search runs once per tool before it is timed).
import os from "node:os";
import path from "node:path";
import { OutputMode, SearchOrder } from "@filetools/proto/filetools/v1/files_pb.js";
import { ALTERNATION, BIG_FILE, BIG_LINES, COMMON_WORD, RARE_LITERAL, ensureData, prng } from "./data.js";
import { baselineName, Daemon, ensureBuilt, ensureRipgrep, lineCount, loadAverage, loopTool, machine, median, ms, quantile, runTool, sh } from "./measure.js";
import { mixedLoadBenchmark } from "./mixed-load.js";
import { MAX_RESULTS, RG, searchRows, sumCounts, withSearchDaemons, type SearchCase } from "./search-runner.js";
import { searchPageBenchmarks } from "./search-pages.js";
import { formatMs, renderTable, type Row } from "./table.js";

const DATA = path.resolve(process.env.BENCH_DATA ?? path.join(os.homedir(), ".cache", "filetools-bench"));
const WINDOW = 50;
const FAR_LINE = 10_000_000;
const RANDOM_WINDOWS = 100;
/** Before the line index, every window rescans the file: stop the random windows after this long. */
const WINDOWS_BUDGET_MS = 180_000;

const log = (line: string) => console.log(line);
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

async function main(): Promise<void> {
  ensureBuilt(log);
  const rg = ensureRipgrep(log);
  const { manifest, generated } = ensureData(DATA, log);
  log("");
  for (const line of machine(DATA, rg)) log(line);
  const big = manifest.big!;
  const tree = manifest.tree!;
  const when = (name: string) => (generated.includes(name) ? "generated now" : "cached");
  log(`data: ${DATA}`);
  log(`  big/${BIG_FILE}: ${(big.bytes / 1e9).toFixed(2)} GB, ${big.lines.toLocaleString("en")} lines; generated in ${big.seconds.toFixed(1)} s (${when("big")})`);
  log(`  tree/: ${tree.files.toLocaleString("en")} files, ${(tree.bytes / 1e6).toFixed(0)} MB, ${tree.binaries} binaries, ${tree.ignored} gitignored; generated in ${tree.seconds.toFixed(1)} s (${when("tree")})`);
  const small = manifest.small!;
  log(`  small/: ${small.files.toLocaleString("en")} files, ${(small.bytes / 1e6).toFixed(0)} MB, ${small.binaries} binaries, ${small.ignored} gitignored; generated in ${small.seconds.toFixed(1)} s (${when("small")})`);
  log("");

  const only = process.env.BENCH_ONLY; // "read" or "search": one half, while working on it
  const rows = [
    ...(only === "search" ? [] : await readBenchmarks()),
    ...(only === "read" ? [] : await searchBenchmarks(rg !== undefined)),
    ...(only === "read" ? [] : await searchPageBenchmarks(DATA, manifest, rg !== undefined, log)),
    ...(only ? [] : await mixedLoadBenchmark(DATA, log)), // alone: npx tsx test/bench/mixed-load.ts
  ];
  log("");
  log(renderTable(rows, baselineName()));
  log(`\nload average at the end: ${loadAverage()}`);
  log("\nratio = filetoolsd time / tool time (below 1: the daemon is faster). Times are wall clock, warm page cache;");
  log("tool times include starting the process; daemon times are one call through the TypeScript client over gRPC.");
}

// ---- Read -------------------------------------------------------------------

async function timedRead(daemon: Daemon, request: { path: string; startLine?: bigint; lineCount?: bigint; tailLines?: bigint }) {
  const started = process.hrtime.bigint();
  let text = "";
  for await (const m of daemon.client.files.read({ workspace: "bench", ...request })) {
    if (m.event.case === "chunk") text += m.event.value.text;
  }
  return { ms: ms(started), text };
}

async function readBenchmarks(): Promise<Row[]> {
  const dir = path.join(DATA, "big");
  const file = sh(path.join(dir, BIG_FILE));
  const sed = (a: number) => `sed -n '${a},${a + WINDOW - 1}p;${a + WINDOW - 1}q' ${file}`;
  const tailHead = (a: number) => `tail -n +${a} ${file} | head -n ${WINDOW}`;
  const rows: Row[] = [];

  log("warming the page cache: cat the big file …");
  await runTool(`cat ${file} > /dev/null`);

  // 1. The first window far into the file, on a fresh daemon (cold index).
  log(`window of ${WINDOW} lines at line ${FAR_LINE.toLocaleString("en")} …`);
  const reference = (await runTool(sed(FAR_LINE))).stdout; // also a warm-up run
  await runTool(tailHead(FAR_LINE));
  // Three rounds, interleaved so that load from elsewhere hits every column alike: sed, tail | head, and a first
  // read on a fresh daemon; the last daemon serves the later windows.
  let daemon!: Daemon;
  const firsts: { ms: number; same: boolean; peak: number }[] = [];
  const sedRuns: number[] = [];
  const tailHeadRuns: number[] = [];
  for (let i = 0; i < 3; i++) {
    sedRuns.push((await runTool(sed(FAR_LINE))).ms);
    tailHeadRuns.push((await runTool(tailHead(FAR_LINE))).ms);
    await daemon?.stop();
    daemon = await Daemon.start({ bench: dir });
    if (i === 0) log(`  daemon started, idle RSS ${mib(daemon.rss())}`);
    await timedRead(daemon, { path: "warmup.txt" }); // connection and code paths, not the big file
    const run = await daemon.peakDuring(() => timedRead(daemon, { path: BIG_FILE, startLine: BigInt(FAR_LINE), lineCount: BigInt(WINDOW) }));
    firsts.push({ ms: run.result.ms, same: run.result.text === reference, peak: run.peak });
  }
  rows.push({
    name: `window ${WINDOW} @ line 10,000,000: first read (fresh daemon, cold index; median of 3 daemons)`,
    daemon: median(firsts.map((f) => f.ms)),
    tools: [
      { tool: "sed -n 'A,Bp;Bq'", ms: median(sedRuns) },
      { tool: `tail -n +A | head -n ${WINDOW}`, ms: median(tailHeadRuns) },
    ],
    peakRss: Math.max(...firsts.map((f) => f.peak)),
    note: firsts.every((f) => f.same) ? "same bytes as sed" : "MISMATCH with sed",
  });

  // 2. Windows at random lines on the same daemon: each timed alone.
  log(`${RANDOM_WINDOWS} windows at random lines …`);
  const rnd = prng(42);
  const starts = Array.from({ length: RANDOM_WINDOWS }, () => 1 + (rnd() % (BIG_LINES - WINDOW)));
  const windows = await daemon.peakDuring(async () => {
    const times: number[] = [];
    let wrong = 0;
    const began = Date.now();
    for (const start of starts) {
      const { ms: t, text } = await timedRead(daemon, { path: BIG_FILE, startLine: BigInt(start), lineCount: BigInt(WINDOW) });
      times.push(t);
      if (!text.startsWith(`${start} `) || lineCount(text) !== WINDOW) wrong++;
      if (Date.now() - began > WINDOWS_BUDGET_MS) break;
    }
    return { times, wrong };
  });
  const sedTimes: number[] = [];
  for (const start of starts.slice(0, 5)) sedTimes.push((await runTool(sed(start))).ms);
  const { times, wrong } = windows.result;
  const partial = times.length < RANDOM_WINDOWS ? `; only ${times.length} of ${RANDOM_WINDOWS} within the ${WINDOWS_BUDGET_MS / 1000} s budget` : "";
  const check = wrong ? `${wrong} WRONG windows` : "all windows checked";
  const sedTool = { tool: `sed, median of the first ${sedTimes.length} windows`, ms: median(sedTimes) };
  rows.push({ name: `${times.length} windows at random lines: median`, daemon: median(times), tools: [sedTool], peakRss: windows.peak, note: check + partial });
  rows.push({ name: `${times.length} windows at random lines: p99`, daemon: quantile(times, 0.99), tools: [sedTool], note: `max ${formatMs(Math.max(...times))}; the slow ones extend the index past what earlier reads scanned` });

  // 3. tail_lines on the warm daemon, then on a fresh one.
  log(`tail_lines ${WINDOW} …`);
  const tailRef = (await runTool(`tail -n ${WINDOW} ${file}`)).stdout;
  const tailMs = await loopTool(`tail -n ${WINDOW} ${file}`, 20);
  const tailTool = { tool: `tail -n ${WINDOW}`, ms: tailMs };
  const tails = await daemon.peakDuring(async () => {
    const out: { ms: number; text: string }[] = [];
    for (let i = 0; i < 5; i++) out.push(await timedRead(daemon, { path: BIG_FILE, tailLines: BigInt(WINDOW) }));
    return out;
  });
  const tailSame = tails.result.every((t) => t.text === tailRef) ? "same bytes as tail" : "MISMATCH with tail";
  rows.push({ name: `tail_lines ${WINDOW} (same daemon, median of 5)`, daemon: median(tails.result.map((t) => t.ms)), tools: [tailTool], peakRss: tails.peak, note: tailSame });
  await daemon.stop();

  const fresh = await Daemon.start({ bench: dir });
  await timedRead(fresh, { path: "warmup.txt" });
  const coldTail = await fresh.peakDuring(() => timedRead(fresh, { path: BIG_FILE, tailLines: BigInt(WINDOW) }));
  rows.push({
    name: `tail_lines ${WINDOW} (fresh daemon, first call)`,
    daemon: coldTail.result.ms,
    tools: [tailTool],
    peakRss: coldTail.peak,
    note: coldTail.result.text === tailRef ? "same bytes as tail" : "MISMATCH with tail",
  });
  await fresh.stop();
  return rows;
}

// ---- Search -----------------------------------------------------------------

function searchCases(dir: string): SearchCase[] {
  // grep gets the .gitignore rules as excludes, so that the three search the same files. Every tool skips binary files.
  const grep = "grep -r --exclude-dir=build --exclude='*.log'";
  const on = { workspace: "tree", dir };
  return [
    {
      ...on,
      name: `search rare literal "${RARE_LITERAL}"`,
      request: { pattern: RARE_LITERAL, fixedStrings: true },
      rg: `${RG} -n -F ${RARE_LITERAL}`,
      grep: `${grep} -n -F ${RARE_LITERAL} .`,
      labels: ["rg -n -j2 -F", "grep -rn -F"],
      count: lineCount,
    },
    {
      ...on,
      name: `search alternation regex "${ALTERNATION}"`,
      request: { pattern: ALTERNATION },
      rg: `${RG} -n -e ${sh(ALTERNATION)}`,
      grep: `${grep} -n -E -e ${sh(ALTERNATION)} .`,
      labels: ["rg -n -j2", "grep -rn -E"],
      count: lineCount,
    },
    {
      ...on,
      name: `search common word "${COMMON_WORD}": count mode (every line scanned)`,
      request: { pattern: COMMON_WORD, fixedStrings: true, outputMode: OutputMode.COUNT },
      rg: `${RG} -c -F ${COMMON_WORD}`,
      grep: `${grep} -c -F ${COMMON_WORD} .`,
      labels: ["rg -c -j2 -F", "grep -rc -F"],
      count: sumCounts,
    },
    {
      ...on,
      name: `search common word "${COMMON_WORD}": first ${MAX_RESULTS.toLocaleString("en")} lines`,
      request: { pattern: COMMON_WORD, fixedStrings: true },
      rg: `${RG} -n -F ${COMMON_WORD} | head -n ${MAX_RESULTS}`,
      grep: `${grep} -n -F ${COMMON_WORD} . | head -n ${MAX_RESULTS}`,
      labels: [`rg -n -j2 -F | head -n ${MAX_RESULTS}`, `grep -rn -F | head -n ${MAX_RESULTS}`],
      count: lineCount,
      aside: { label: `rg --sort path (the daemon's default order) | head -n ${MAX_RESULTS}`, cmd: `rg --sort path --no-require-git -n -F ${COMMON_WORD} | head -n ${MAX_RESULTS}` },
    },
    {
      ...on,
      name: `search common word "${COMMON_WORD}": first ${MAX_RESULTS.toLocaleString("en")} lines, order FOUND`,
      request: { pattern: COMMON_WORD, fixedStrings: true, order: SearchOrder.FOUND },
      rg: `${RG} -n -F ${COMMON_WORD} | head -n ${MAX_RESULTS}`,
      grep: `${grep} -n -F ${COMMON_WORD} . | head -n ${MAX_RESULTS}`,
      labels: [`rg -n -j2 -F | head -n ${MAX_RESULTS}`, `grep -rn -F | head -n ${MAX_RESULTS}`],
      count: lineCount,
    },
  ];
}

async function searchBenchmarks(haveRg: boolean): Promise<Row[]> {
  const dir = path.join(DATA, "tree");
  return withSearchDaemons({ tree: dir }, (daemon, baseline) => {
    log(`search: daemon started, idle RSS ${mib(daemon.rss())}`);
    return searchRows(daemon, searchCases(dir), haveRg, log, baseline);
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
