// Search against a real daemon: results identical to grep -rn on a fixture
// tree, the walk's filters, output modes, caps, the deadline and cancellation.
import { execFileSync } from "node:child_process";
import { mkdirSync, opendirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OutputMode, SearchOrder } from "@filetools/proto/filetools/v1/files_pb.js";
import { collect, expectError, setup } from "./daemon.js";

type D = Awaited<ReturnType<typeof setup>>;
let d: D;

type SearchReq = Parameters<D["client"]["files"]["search"]>[0];

async function run(req: Omit<SearchReq, "workspace" | "$typeName">, ws = "w", options: Parameters<D["client"]["files"]["search"]>[1] = {}) {
  const msgs = await collect(d.client.files.search({ workspace: ws, ...req }, options));
  const out = { matches: [] as any[], files: [] as string[], counts: [] as [string, number][], summary: undefined as any, messages: msgs.map((m) => m.event.case) };
  for (const m of msgs) {
    if (m.event.case === "match") out.matches.push(m.event.value);
    else if (m.event.case === "matches") {
      expect(m.event.value.matches.length, "a batch is never empty").toBeGreaterThan(0);
      out.matches.push(...m.event.value.matches);
    }
    else if (m.event.case === "file") out.files.push(m.event.value.path);
    else if (m.event.case === "count") out.counts.push([m.event.value.path, Number(m.event.value.count)]);
    else if (m.event.case === "summary") out.summary = m.event.value;
  }
  expect(msgs.at(-1)?.event.case, "the stream ends with the summary").toBe("summary");
  return out;
}

function put(root: string, rel: string, data: string | Buffer) {
  const file = path.join(root, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, data);
}

/** grep -rn in `dir`, as "/path:line:text" lines sorted by path then line number. */
function grep(dir: string, args: string[]): string[] {
  let out = "";
  try {
    out = execFileSync("grep", ["-rnI", ...args, "."], { cwd: dir, encoding: "utf8", env: { ...process.env, LC_ALL: "C.UTF-8" }, maxBuffer: 1 << 28 });
  } catch (error: any) {
    if (error.status !== 1) throw error; // 1 = no match
  }
  return sortHits(out.split("\n").filter((l) => l !== "").map((l) => "/" + l.slice(2)));
}

/** A directory's names in the order the file system lists them (readdirSync sorts them). */
function listedNames(dir: string): string[] {
  const handle = opendirSync(dir);
  const names: string[] = [];
  try {
    for (let dirent = handle.readSync(); dirent !== null; dirent = handle.readSync()) names.push(dirent.name);
  } finally {
    handle.closeSync();
  }
  return names;
}

function sortHits(lines: string[]): string[] {
  const key = (l: string) => {
    const m = /^(.*?):(\d+):/.exec(l)!;
    return [m[1]!, Number(m[2])] as const;
  };
  return lines.sort((a, b) => {
    const [pa, la] = key(a);
    const [pb, lb] = key(b);
    return pa < pb ? -1 : pa > pb ? 1 : la - lb;
  });
}

const WORDS = ["alpha", "beta", "needle", "gamma", "Needle", "delta", "barzz", "quux", "épée", "naïve", "x=1", "TODO"];

beforeAll(async () => {
  d = await setup("w", { args: ["--workers", "1"] });
  // A deterministic tree: nested directories, hidden files, CRLF, a long line, binary files.
  let seed = 7;
  const rnd = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  for (let f = 0; f < 60; f++) {
    const dir = ["", "src/", "src/lib/", "docs/", "a/b/c/", ".hidden/"][f % 6]!;
    const lines: string[] = [];
    for (let l = 0, n = 1 + rnd(80); l < n; l++) {
      lines.push(Array.from({ length: 1 + rnd(8) }, () => WORDS[rnd(WORDS.length)]).join(" "));
    }
    const eol = f % 7 === 0 ? "\r\n" : "\n";
    put(d.root, `${dir}file${f}.${["ts", "md", "txt"][f % 3]}`, lines.join(eol) + (f % 5 === 0 ? "" : eol));
  }
  put(d.root, "long.txt", "start " + "y".repeat(3000) + " needle end\nshort needle\n");
  put(d.root, "img.png", Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0]), Buffer.from("needle\n")]));
  put(d.root, "data.bin", Buffer.from("needle\0\0\0needle\n"));
});

afterAll(async () => {
  await d?.stop();
});

describe("Search matches grep -rn", () => {
  const cases: [string, Omit<SearchReq, "workspace">, string[]][] = [
    ["a rare literal", { pattern: "needle", fixedStrings: true }, ["-F", "-e", "needle"]],
    ["a regex alternation", { pattern: "bar[z]+|qu+x|^TODO" }, ["-E", "-e", "bar[z]+|qu+x|^TODO"]],
    ["a case-insensitive literal", { pattern: "NEEDLE", fixedStrings: true, caseInsensitive: true }, ["-iF", "-e", "NEEDLE"]],
    ["a case-insensitive regex", { pattern: "t[o]do|GAM+A", caseInsensitive: true }, ["-iE", "-e", "t[o]do|GAM+A"]],
    ["non-ASCII text", { pattern: "épée" }, ["-e", "épée"]],
  ];
  for (const [name, req, grepArgs] of cases) {
    it(`${name}: same paths, line numbers and lines`, async () => {
      const r = await run({ ...req, maxResults: 10_000, respectGitignore: false });
      const mine = sortHits(r.matches.filter((m) => !m.lineCut).map((m) => `${m.path}:${m.lineNumber}:${m.line}`));
      const theirs = grep(d.root, grepArgs).filter((l) => !l.startsWith("/long.txt:1:"));
      expect(theirs.length).toBeGreaterThan(0);
      expect(mine).toEqual(theirs);
      expect(r.summary.truncated).toBe(false);
      expect(Number(r.summary.matches)).toBe(r.matches.length);
      expect(Number(r.summary.binarySkipped)).toBe(2);
    });
  }

  it("$ matches before a CRLF too (unlike grep, like rg --crlf)", async () => {
    put(d.root, "crlf/win.txt", "one end\r\ntwo\r\n");
    const r = await run({ path: "crlf", pattern: "end$" });
    expect(r.matches.map((m) => [m.lineNumber, m.line])).toEqual([[1n, "one end\r"]]);
  });

  it("cuts a line over 500 characters and flags it; the column still counts from the line's start", async () => {
    const r = await run({ path: "long.txt", pattern: "needle" });
    expect(r.matches.map((m) => [m.lineNumber, m.lineCut, m.line.length, m.column])).toEqual([
      [1n, true, 500, 3008],
      [2n, false, 12, 7],
    ]);
  });

  it("counts (as grep -c) and lists matching files (as grep -l)", async () => {
    const counts = await run({ pattern: "gamma", outputMode: OutputMode.COUNT, maxResults: 10_000 });
    const grepCounts = execFileSync("grep", ["-rcI", "gamma", "."], { cwd: d.root, encoding: "utf8" })
      .split("\n")
      .filter((l) => l && !l.endsWith(":0"))
      .map((l) => [`/${l.slice(2, l.lastIndexOf(":"))}`, Number(l.slice(l.lastIndexOf(":") + 1))] as [string, number])
      .sort();
    expect([...counts.counts].sort()).toEqual(grepCounts);
    const files = await run({ pattern: "gamma", outputMode: OutputMode.FILES_WITH_MATCHES, maxResults: 10_000 });
    expect([...files.files].sort()).toEqual(grepCounts.map(([p]) => p));
    expect(Number(files.summary.filesMatched)).toBe(grepCounts.length);
  });

  it("streams results in walk order (sorted names, a directory's files where it sorts)", async () => {
    const r = await run({ pattern: "gamma", outputMode: OutputMode.FILES_WITH_MATCHES, maxResults: 10_000 });
    const order = (p: string) => p.split("/");
    const sorted = [...r.files].sort((a, b) => {
      const pa = order(a);
      const pb = order(b);
      for (let i = 0; i < Math.min(pa.length, pb.length); i++) if (pa[i] !== pb[i]) return pa[i]! < pb[i]! ? -1 : 1;
      return pa.length - pb.length;
    });
    expect(r.files).toEqual(sorted);
  });
});

describe("Search filters and options", () => {
  beforeAll(async () => {
    await d.client.workspaces.createWorkspace({ workspace: "g" });
    const root = d.hostDir("g");
    put(root, ".gitignore", "*.log\nbuild/\n");
    put(root, "keep.ts", "token one\n");
    put(root, "keep.md", "token two\n");
    put(root, "debug.log", "token three\n");
    put(root, "build/out.ts", "token four\n");
    put(root, "vendor/lib.ts", "token five\n");
    put(root, "src/vendor/deep.ts", "token six\n");
    put(root, ".env", "token seven\n");
    put(root, "big.txt", "token " + "z".repeat(5000) + "\n");
    put(root, "ctx.txt", ["l1", "l2 token", "l3", "l4", "l5", "l6 token", "l7 token", "l8", "l9"].join("\n") + "\n");
  });
  const paths = async (req: Omit<SearchReq, "workspace">) =>
    (await run({ ...req, outputMode: OutputMode.FILES_WITH_MATCHES }, "g")).files.sort();

  it("honours .gitignore by default, and not when asked", async () => {
    expect(await paths({ pattern: "token" })).toEqual(["/.env", "/big.txt", "/ctx.txt", "/keep.md", "/keep.ts", "/src/vendor/deep.ts", "/vendor/lib.ts"]);
    expect(await paths({ pattern: "token", respectGitignore: false })).toEqual([
      "/.env",
      "/big.txt",
      "/build/out.ts",
      "/ctx.txt",
      "/debug.log",
      "/keep.md",
      "/keep.ts",
      "/src/vendor/deep.ts",
      "/vendor/lib.ts",
    ]);
  });

  it("include and exclude globs (a glob without a slash matches names at any depth; excluded directories are skipped)", async () => {
    expect(await paths({ pattern: "token", include: ["*.ts"] })).toEqual(["/keep.ts", "/src/vendor/deep.ts", "/vendor/lib.ts"]);
    expect(await paths({ pattern: "token", include: ["*.ts"], exclude: ["vendor"] })).toEqual(["/keep.ts"]);
    expect(await paths({ pattern: "token", include: ["src/**"] })).toEqual(["/src/vendor/deep.ts"]);
    expect(await paths({ path: "src", pattern: "token", include: ["vendor/*.ts"] })).toEqual(["/src/vendor/deep.ts"]);
    await expectError(run({ pattern: "x", include: ["[a-"] }, "g"), "INVALID_ARGUMENT");
    // Each walked file is tested against every glob: 100 at most in each list.
    const many = Array.from({ length: 101 }, (_, i) => `*zz${i}*`);
    expect(await paths({ pattern: "token", include: [...many.slice(0, 100), "*.ts"].slice(1) })).toEqual(["/keep.ts", "/src/vendor/deep.ts", "/vendor/lib.ts"]);
    const err = await expectError(run({ pattern: "x", exclude: many }, "g"), "INVALID_ARGUMENT");
    expect(err.message).toContain("exclude: at most 100 globs, not 101");
  });

  it("skips and counts files over max_file_size", async () => {
    const r = await run({ pattern: "token", maxFileSize: 1000n, respectGitignore: false }, "g");
    expect(r.matches.some((m) => m.path === "/big.txt")).toBe(false);
    expect(Number(r.summary.tooLargeSkipped)).toBe(1);
  });

  it("context lines before and after, never repeated", async () => {
    const r = await run({ path: "ctx.txt", pattern: "token", contextBefore: 2, contextAfter: 1 }, "g");
    expect(r.matches.map((m) => [Number(m.lineNumber), m.before, m.after])).toEqual([
      [2, ["l1"], ["l3"]],
      [6, ["l4", "l5"], []],
      [7, [], ["l8"]],
    ]);
  });

  it("batch_matches gives the same results as single messages: cut lines, context, truncation", async () => {
    for (const [req, ws] of [
      [{ pattern: "needle", fixedStrings: true, maxResults: 10_000, respectGitignore: false }, "w"],
      [{ pattern: "a", maxResults: 5 }, "w"],
      [{ path: "ctx.txt", pattern: "token", contextBefore: 2, contextAfter: 1 }, "g"],
    ] as const) {
      const single = await run(req, ws);
      const batched = await run({ ...req, batchMatches: true }, ws);
      expect(batched.matches).toEqual(single.matches);
      expect(batched.summary).toEqual(single.summary);
      expect(batched.messages.filter((c) => c !== "matches")).toEqual(["summary"]);
    }
    const cut = await run({ path: "long.txt", pattern: "needle", batchMatches: true });
    expect(cut.matches.map((m) => [m.lineCut, Number(m.lineNumber)])).toEqual([[true, 1], [false, 2]]);
    expect(cut.messages).toEqual(["matches", "summary"]);
  });

  it("max_results stops the search and sets truncated", async () => {
    const r = await run({ pattern: "a", maxResults: 5 });
    expect(r.matches.length).toBe(5);
    expect(r.summary.truncated).toBe(true);
    const files = await run({ pattern: "a", maxResults: 3, outputMode: OutputMode.FILES_WITH_MATCHES });
    expect(files.files.length).toBe(3);
    expect(files.summary.truncated).toBe(true);
    const exact = await run({ path: "ctx.txt", pattern: "token", maxResults: 3 }, "g");
    expect(exact.summary.truncated).toBe(false);
    await expectError(run({ pattern: "a", maxResults: 10_001 }), "INVALID_ARGUMENT");
  });

  it("an invalid regex is INVALID_ARGUMENT with the engine's message; caps on size and nesting", async () => {
    const err = await expectError(run({ pattern: "a(b" }), "INVALID_ARGUMENT");
    expect(err.message).toMatch(/Unterminated group/);
    await expectError(run({ pattern: "x".repeat(2000) }), "INVALID_ARGUMENT");
    await expectError(run({ pattern: "(".repeat(60) + ")".repeat(60) }), "INVALID_ARGUMENT");
  });

  it("an order this daemon does not know is INVALID_ARGUMENT, not another order", async () => {
    const err = await expectError(run({ pattern: "hello", order: 7 as SearchOrder }), "INVALID_ARGUMENT", "INVALID_ARGUMENT");
    expect(err.message).toMatch(/order 7 .*SEARCH_ORDER_PATH or SEARCH_ORDER_FOUND/);
  });

  it("a missing path is NOT_FOUND, an escaping one PATH_ESCAPES_WORKSPACE", async () => {
    await expectError(run({ path: "nope", pattern: "x" }), "NOT_FOUND", "NOT_FOUND");
    await expectError(run({ path: "../x", pattern: "x" }), "PERMISSION_DENIED", "PATH_ESCAPES_WORKSPACE");
  });
});

describe("Search safety", () => {
  beforeAll(async () => {
    await d.client.workspaces.createWorkspace({ workspace: "evil" });
    put(d.hostDir("evil"), "line.txt", "a".repeat(5000) + "!\n");
    put(d.hostDir("evil"), "small.txt", "hello\n");
  });

  it("(a+)+$ over a long line finishes at once (linear-engine fallback)", async () => {
    const r = await run({ pattern: "(a+)+$" }, "evil", { deadline: 20_000 });
    expect(r.summary.timedOut).toBe(false);
    expect(r.matches).toEqual([]);
  });

  it("case-insensitive (A+)+$ also finishes at once (ASCII folding keeps the fallback)", async () => {
    const r = await run({ pattern: "(A+)+$", caseInsensitive: true }, "evil", { deadline: 20_000 });
    expect(r.summary.timedOut).toBe(false);
  });

  it("a FIFO never blocks: skipped in a walk, refused when named", async () => {
    execFileSync("mkfifo", [path.join(d.hostDir("evil"), "pipe")]);
    const r = await run({ pattern: "hello" }, "evil", { deadline: 20_000 });
    expect(r.matches.map((m) => m.path)).toEqual(["/small.txt"]);
    await expectError(run({ path: "pipe", pattern: "x" }, "evil", { deadline: 20_000 }), "__any__", "NOT_A_REGULAR_FILE");
  });

  it("a pattern the linear engine cannot run stops at the deadline with timed_out, while a Stat and a Read are answered", async () => {
    const started = Date.now();
    let searchDone = 0;
    // A backreference keeps the match on the backtracking engine: only the deadline stops it.
    const search = run({ pattern: "(a+)+\\1$", path: "line.txt" }, "evil", { deadline: 4000 }).then((r) => {
      searchDone = Date.now();
      return r;
    });
    await new Promise((r) => setTimeout(r, 500));
    const stat = await d.client.files.stat({ workspace: "evil", path: "small.txt" });
    const statDone = Date.now();
    const read = await collect(d.client.files.read({ workspace: "evil", path: "small.txt" }));
    expect(stat.file?.size).toBe(6n);
    expect(read.length).toBeGreaterThan(0);
    const r = await search;
    expect(searchDone).toBeGreaterThan(statDone);
    expect(r.summary.timedOut).toBe(true);
    expect(searchDone - started).toBeLessThan(10_000);
    // The worker was replaced: the next search (one worker in this daemon) runs.
    const next = await run({ pattern: "hello" }, "evil", { deadline: 20_000 });
    expect(next.matches.length).toBe(1);
  });

  it("client cancellation stops the search; the daemon stays healthy", async () => {
    const controller = new AbortController();
    const search = run({ pattern: "(a+)+\\1$", path: "line.txt" }, "evil", { signal: controller.signal });
    setTimeout(() => controller.abort(), 500);
    await expectError(search, "CANCELLED");
    const next = await run({ pattern: "hello" }, "evil", { deadline: 20_000 });
    expect(next.matches.length).toBe(1);
    expect(next.summary.timedOut).toBe(false);
  });
});

describe("Search over many tasks on two workers", () => {
  let two: D;
  beforeAll(async () => {
    two = await setup("m", { args: ["--workers", "2"] });
    // ~600 files in nested directories: tasks of 32, 64, … files run on both workers at once.
    for (let f = 0; f < 600; f++) {
      const lines = Array.from({ length: 1 + (f % 9) }, (_, l) => ((f * 7 + l) % 4 === 0 ? `hit ${f}.${l} FIXME_${f}` : `line ${f}.${l}`));
      put(two.root, `d${f % 5}/e${f % 11}/f${f}.txt`, lines.join("\n") + "\n");
    }
  });
  afterAll(async () => {
    await two?.stop();
  });
  const search = async (req: Omit<SearchReq, "workspace" | "$typeName">) => {
    const saved = d;
    d = two;
    try {
      return await run(req, "m");
    } finally {
      d = saved;
    }
  };
  const hit = (m: any) => `${m.path}:${m.lineNumber}:${m.line}`;

  it("gives grep -rn's lines, in walk order", async () => {
    const all = await search({ pattern: "FIXME_[0-9]+", maxResults: 10_000 });
    expect(sortHits(all.matches.map(hit))).toEqual(grep(two.root, ["-E", "-e", "FIXME_[0-9]+"]));
    const files = [...new Set(all.matches.map((m) => m.path as string))];
    expect(files).toEqual([...files].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))); // one name per level: plain order is walk order
  });

  it("batch_matches: the same matches in the same order, in fewer messages; without it, one match per message", async () => {
    for (const req of [
      { pattern: "hit", fixedStrings: true, maxResults: 10_000 },
      { pattern: "hit", fixedStrings: true, maxResults: 37 },
      { pattern: "FIXME_[0-9]+", contextBefore: 2, contextAfter: 1, maxResults: 10_000 },
      { pattern: "FIXME_[0-9]+", contextBefore: 1, maxResults: 1 },
    ]) {
      const single = await search(req);
      const batched = await search({ ...req, batchMatches: true });
      expect(batched.matches, JSON.stringify(req)).toEqual(single.matches);
      expect(batched.summary).toEqual(single.summary);
      expect(single.messages.filter((c) => c !== "match")).toEqual(["summary"]);
      expect(batched.messages.filter((c) => c !== "matches")).toEqual(["summary"]);
      if (single.matches.length > 100) expect(batched.messages.length).toBeLessThan(single.matches.length / 10);
    }
    // Other modes are not batched: one file or count per message either way.
    const files = await search({ pattern: "hit", fixedStrings: true, outputMode: OutputMode.FILES_WITH_MATCHES, maxResults: 10_000, batchMatches: true });
    expect(files.files.length).toBeGreaterThan(100);
    expect(files.messages.filter((c) => c !== "file")).toEqual(["summary"]);
  });

  it("max_results gives exactly the first results in walk order, whichever task found them", async () => {
    const all = (await search({ pattern: "hit", fixedStrings: true, maxResults: 10_000 })).matches.map(hit);
    for (const k of [1, 37, 200, all.length - 1]) {
      const some = await search({ pattern: "hit", fixedStrings: true, maxResults: k });
      expect(some.matches.map(hit), `max_results ${k}`).toEqual(all.slice(0, k));
      expect(some.summary.truncated).toBe(true);
    }
    const exact = await search({ pattern: "hit", fixedStrings: true, maxResults: all.length });
    expect(exact.summary.truncated).toBe(false);
    const counts = (await search({ pattern: "hit", fixedStrings: true, outputMode: OutputMode.COUNT, maxResults: 10_000 })).counts;
    const first = await search({ pattern: "hit", fixedStrings: true, outputMode: OutputMode.COUNT, maxResults: 7 });
    expect(first.counts).toEqual(counts.slice(0, 7));
    expect(first.summary.truncated).toBe(true);
  });

  it("order FOUND: the same results as PATH order, a file's matches together and in line order; max_results as many real ones", async () => {
    const byFile = (matches: any[]) => {
      const files = new Map<string, string[]>();
      for (const m of matches) files.set(m.path, [...(files.get(m.path) ?? []), hit(m)]);
      return files;
    };
    for (const batchMatches of [false, true]) {
      const req = { pattern: "FIXME_[0-9]+", contextBefore: 1, maxResults: 10_000, batchMatches };
      const sorted = await search(req);
      const found = await search({ ...req, order: SearchOrder.FOUND });
      expect(found.summary).toEqual(sorted.summary);
      expect([...found.matches].sort((a, b) => hit(a).localeCompare(hit(b)))).toEqual([...sorted.matches].sort((a, b) => hit(a).localeCompare(hit(b))));
      // Each file's matches come in one run, in line order, as in path order.
      const files = byFile(found.matches);
      expect(files.size).toBe(new Set(found.matches.map((m) => m.path)).size);
      expect([...files.values()].flat()).toEqual(found.matches.map(hit));
      expect(new Map([...files].sort())).toEqual(new Map([...byFile(sorted.matches)].sort()));
    }
    const all = new Set((await search({ pattern: "hit", fixedStrings: true, maxResults: 10_000 })).matches.map(hit));
    for (const k of [1, 37, 200, all.size - 1]) {
      const some = await search({ pattern: "hit", fixedStrings: true, maxResults: k, order: SearchOrder.FOUND });
      expect(some.matches.length, `max_results ${k}`).toBe(k);
      for (const m of some.matches) expect(all.has(hit(m))).toBe(true);
      expect(new Set(some.matches.map(hit)).size).toBe(k);
      expect(some.summary.truncated).toBe(true);
    }
    const exact = await search({ pattern: "hit", fixedStrings: true, maxResults: all.size, order: SearchOrder.FOUND });
    expect(exact.summary.truncated).toBe(false);
    for (const outputMode of [OutputMode.COUNT, OutputMode.FILES_WITH_MATCHES]) {
      const everything = await search({ pattern: "hit", fixedStrings: true, outputMode, maxResults: 10_000 });
      const found = await search({ pattern: "hit", fixedStrings: true, outputMode, maxResults: 10_000, order: SearchOrder.FOUND });
      expect([...found.counts].sort()).toEqual([...everything.counts].sort());
      expect([...found.files].sort()).toEqual([...everything.files].sort());
      const first = await search({ pattern: "hit", fixedStrings: true, outputMode, maxResults: 7, order: SearchOrder.FOUND });
      expect(first.counts.length + first.files.length).toBe(7);
      expect(first.summary.truncated).toBe(true);
    }
  });

  it("four workers (16 tasks in flight) warn of no listener leak", async () => {
    const four = await setup("q", { args: ["--workers", "4"] });
    try {
      // Tasks of 32, 64, … 512 files: 6,000 files make more than 10 of them, all in flight at once.
      for (let f = 0; f < 6000; f++) put(four.root, `d${f % 40}/f${f}.txt`, "hit\n");
      for (const order of [SearchOrder.PATH, SearchOrder.FOUND]) {
        await collect(four.client.files.search({ workspace: "q", pattern: "hit", fixedStrings: true, maxResults: 10_000, batchMatches: true, order }));
      }
      expect(four.logs()).not.toContain("MaxListenersExceededWarning");
    } finally {
      await four.stop();
    }
  });

  it("order FOUND walks a directory in the order the file system lists it; PATH in sorted order", async () => {
    const names = Array.from({ length: 30 }, (_, i) => `f${String((i * 17) % 30).padStart(2, "0")}.txt`);
    for (const name of names) put(two.root, `flat/${name}`, "zzflat\n");
    const listed = listedNames(path.join(two.root, "flat"));
    const sorted = [...listed].sort();
    expect(listed, "this file system lists names unsorted").not.toEqual(sorted);
    // 30 files are one task: the order within it is the walk's.
    const req = { path: "flat", pattern: "zzflat", fixedStrings: true, outputMode: OutputMode.FILES_WITH_MATCHES };
    expect((await search({ ...req, order: SearchOrder.FOUND })).files).toEqual(listed.map((n) => `/flat/${n}`));
    expect((await search(req)).files).toEqual(sorted.map((n) => `/flat/${n}`));
  });
});
