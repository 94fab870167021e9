import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { compilePattern, foldAsciiCase } from "./pattern.js";
import { requiredLiterals } from "./literals.js";
import { FoldedLiteralFinder, LiteralFinder, TOO_COMMON } from "./find.js";
import { cutLine, FileScan, Matcher, type ScanOptions } from "./scan.js";
import { SearchPool } from "./pool.js";
import { newLease, revokeTask, scanFile } from "./worker.js";
import { FileToolsError } from "../errors.js";
import { fromBinary } from "@bufbuild/protobuf";
import { SearchResponseSchema } from "@filetools/proto/filetools/v1/files_pb.js";
import { encodeMatches, matchesResponse } from "./match-wire.js";

function reason(f: () => unknown): string {
  try {
    f();
  } catch (error) {
    return error instanceof FileToolsError ? `${error.reason}: ${error.message}` : String(error);
  }
  return "ok";
}

/** Reference: line-by-line matching, as grep does. */
function reference(text: string, re: RegExp): number[] {
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  return lines.flatMap((line, i) => (new RegExp(re.source, re.flags.replace("g", "")).test(line) ? [i + 1] : []));
}

const content = (o: Partial<ScanOptions> = {}): ScanOptions => ({ mode: "content", before: 0, after: 0, limit: 1000, ...o });

function scanText(text: string, spec: ReturnType<typeof compilePattern>, options: ScanOptions, pieces = 1) {
  const matcher = new Matcher(spec);
  const scan = new FileScan(options);
  // Feed in `pieces` segments of whole lines.
  const lines = text.split(/(?<=\n)/);
  const per = Math.ceil(lines.length / pieces);
  for (let i = 0; i < lines.length && !scan.done; i += per) scan.feed(matcher.segment(Buffer.from(lines.slice(i, i + per).join(""))));
  return scan.result;
}

describe("patterns", () => {
  it("refuses long, deeply nested, huge-repeat and invalid patterns with the engine's message", () => {
    expect(reason(() => compilePattern("a".repeat(1025), { fixedStrings: false, caseInsensitive: false }))).toMatch(/INVALID_ARGUMENT: .*1024/);
    expect(reason(() => compilePattern("(".repeat(51) + "a" + ")".repeat(51), { fixedStrings: false, caseInsensitive: false }))).toMatch(/nests/);
    expect(reason(() => compilePattern("(a{1,5000})", { fixedStrings: false, caseInsensitive: false }))).toMatch(/repeats/);
    expect(reason(() => compilePattern("a(b", { fixedStrings: false, caseInsensitive: false }))).toBe("INVALID_ARGUMENT: invalid regular expression /a(b/: Unterminated group");
    expect(reason(() => compilePattern("a(b", { fixedStrings: true, caseInsensitive: false }))).toBe("ok");
  });

  it("folds ASCII case into classes, and gives up where that is not exact", () => {
    expect(foldAsciiCase("ab")).toBe("[aA][bB]");
    expect(foldAsciiCase("[a-f0-9]x\\d\\n")).toBe("[a-f0-9A-F][xX]\\d\\n");
    expect(foldAsciiCase("(?<word>q)\\k<word>")).toBeNull();
    expect(foldAsciiCase("(a)\\1")).toBeNull();
    expect(foldAsciiCase("é")).toBeNull();
    expect(foldAsciiCase("[0-z]")).toBeNull();
    expect(foldAsciiCase("(?<name>x)")).toBe("(?<name>[xX])");
    const folded = compilePattern("Hello.W[o-r]ld\\b", { fixedStrings: false, caseInsensitive: true });
    expect(folded).toMatchObject({ kind: "regex", flags: "gm" });
    const re = new RegExp((folded as { source: string }).source);
    for (const s of ["hello world", "HELLO-WORLD", "hElLo WqRlD"]) expect(re.test(s)).toBe(/Hello.W[o-r]ld\b/i.test(s));
    expect(compilePattern("(a)\\1", { fixedStrings: false, caseInsensitive: true })).toMatchObject({ flags: "gim" });
    expect(compilePattern("a.b", { fixedStrings: true, caseInsensitive: true })).toMatchObject({ source: "[aA]\\.[bB]" });
  });
});

describe("literal finder", () => {
  it("finds every occurrence Buffer.indexOf finds, sparse or dense, at the ends and overlapping", () => {
    let seed = 11;
    const rnd = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const texts = [
      "zqx_needle_4711 at the start, then zqx_needle_4711 and the end zqx_needle_4711",
      Array.from({ length: 3000 }, () => "abcqz_1"[rnd(7)]).join(""), // the rare byte everywhere: indexOf takes over
      "aaaaaaaa",
      "é needle naïve needle",
      "",
    ];
    for (const text of texts) {
      const buf = Buffer.from(text);
      for (const needle of ["zqx_needle_4711", "q", "qz", "z_1", "aaa", "needle", "naïve", "", "absent!"]) {
        const bytes = Buffer.from(needle);
        const find = new LiteralFinder(bytes).in(buf);
        const mine: number[] = [];
        const theirs: number[] = [];
        for (let at = find(0); at >= 0 && at < buf.length; at = find(at + 1)) mine.push(at);
        for (let at = buf.indexOf(bytes); at >= 0 && at < buf.length; at = buf.indexOf(bytes, at + 1)) theirs.push(at);
        expect(mine, `${needle} in ${text.slice(0, 20)}`).toEqual(theirs);
      }
    }
  });

  it("finds a literal in any ASCII case, or says its rare byte is too common", () => {
    const text = Buffer.from("Needle, NEEDLE and needle; nEeDlE_1 é needle_2 NEEDLE_3");
    const asciiLower = (b: Buffer) => Buffer.from(b.map((c) => (c >= 0x41 && c <= 0x5a ? c | 0x20 : c)));
    const lowered = asciiLower(text);
    for (const needle of ["needle", "NEEDLE_", "e_", "é ne", "absent"]) {
      const find = new FoldedLiteralFinder(Buffer.from(needle)).in(text);
      const lower = asciiLower(Buffer.from(needle));
      const mine: number[] = [];
      const theirs: number[] = [];
      for (let at = find(0); at >= 0; at = find(at + 1)) mine.push(at);
      for (let at = lowered.indexOf(lower); at >= 0; at = lowered.indexOf(lower, at + 1)) theirs.push(at);
      expect(mine, needle).toEqual(theirs);
    }
    const dense = Buffer.from("ab".repeat(5000));
    const find = new FoldedLiteralFinder(Buffer.from("abc")).in(dense);
    expect(find(0)).toBe(TOO_COMMON);
  });
});

describe("required literals", () => {
  it("finds strings every match contains, and none where there are none", () => {
    expect(requiredLiterals("(FIXME|HACK|XXX)_[0-9]+")).toEqual(["FIXME_", "HACK_", "XXX_"]);
    expect(requiredLiterals("\\bself\\.\\w+")).toEqual(["self."]);
    expect(requiredLiterals("foo\\d+barbaz")).toEqual(["barbaz"]);
    expect(requiredLiterals("x?abc")).toEqual(["abc"]);
    expect(requiredLiterals("a(?=bc)d")).toEqual(["ad"]); // a lookahead matches no text of its own
    expect(requiredLiterals("\\x41\\u0042C\\.")).toEqual(["ABC."]);
    expect(requiredLiterals("naïve\\b")).toEqual(["naïve"]);
    for (const none of ["a", "abc|d", "abc|", "(abc)?", "[ab]c", "a.b", "\\w+", "(a)\\1"]) expect(requiredLiterals(none), none).toBeNull();
  });

  it("are looked up case-sensitively only", () => {
    expect(compilePattern("foo.bar", { fixedStrings: false, caseInsensitive: false })).toMatchObject({ literals: ["foo"] });
    expect(compilePattern("foo.bar", { fixedStrings: false, caseInsensitive: true })).toMatchObject({ literals: ["foo"], foldCase: true });
    expect(compilePattern("(foo)\\1", { fixedStrings: false, caseInsensitive: true })).toMatchObject({ flags: "gim", literals: null });
  });

  it("give the same lines, columns and context as a full scan, whether rare or dense, in any case when asked", () => {
    const rare = Array.from({ length: 3000 }, (_, i) => (i % 700 === 5 ? `x é FIXME_${i} y` : i % 97 === 0 ? `FIXME without digits ${i}` : i % 501 === 0 ? `é fixMe_${i}` : `row ${i} ünïcode`)).join("\n");
    const dense = Array.from({ length: 3000 }, (_, i) => (i % 3 === 0 ? `é HACK_${i}` : i % 3 === 1 ? `hAcK_${i} x` : `HACK ${i}`)).join("\n") + "\n";
    for (const [text, caseInsensitive] of [[rare, false], [dense, false], [rare, true], [dense, true]] as const) {
      const spec = compilePattern("(FIXME|HACK|XXX)_[0-9]+", { fixedStrings: false, caseInsensitive });
      const plain = { ...spec, literals: null };
      for (const pieces of [1, 7]) {
        const options = content({ before: 1, after: 1, limit: 5000 });
        const r = scanText(text, spec, options, pieces);
        expect(r.matches.map((m) => m.line)).toEqual(reference(text, caseInsensitive ? /(FIXME|HACK|XXX)_[0-9]+/i : /(FIXME|HACK|XXX)_[0-9]+/));
        expect(r).toEqual(scanText(text, plain, options, pieces));
        expect(scanText(text, spec, content({ mode: "count" }), pieces).count).toBe(r.matches.length);
      }
    }
  });
});

describe("line scan", () => {
  const text = ["alpha", "beta", "gamma alpha", "", "delta", "alphabet", "omega", "x alpha y"].join("\n") + "\n";

  it("finds the same lines as line-by-line matching, in one segment or many", () => {
    for (const [pattern, fixed] of [["alpha", true], ["a$", false], ["^$", false], ["\\s", false], ["[^a]", false], ["a*", false], ["l.h", false]] as const) {
      const spec = compilePattern(pattern, { fixedStrings: fixed, caseInsensitive: false });
      const expected = reference(text, fixed ? new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")) : new RegExp(pattern));
      for (const pieces of [1, 3, 8]) {
        expect(scanText(text, spec, content(), pieces).matches.map((m) => m.line), `${pattern} in ${pieces}`).toEqual(expected);
      }
    }
  });

  it("reports 1-based columns in code points and cuts long lines", () => {
    const spec = compilePattern("needle", { fixedStrings: true, caseInsensitive: false });
    const r = scanText("é😀 needle\n" + "x".repeat(600) + "needle\n", spec, content());
    expect(r.matches[0]).toMatchObject({ line: 1, column: 4, text: "é😀 needle", cut: false });
    expect(r.matches[1]).toMatchObject({ line: 2, column: 601, cut: true });
    expect(r.matches[1]!.text.length).toBe(500);
    expect(cutLine("😀".repeat(600)).text).toBe("😀".repeat(500));
  });

  it("gives context lines without repeating any, across segments", () => {
    const lines = Array.from({ length: 20 }, (_, i) => (i % 5 === 0 ? `hit ${i + 1}` : `line ${i + 1}`));
    const spec = compilePattern("hit", { fixedStrings: true, caseInsensitive: false });
    for (const pieces of [1, 4, 20]) {
      const r = scanText(lines.join("\n") + "\n", spec, content({ before: 2, after: 3 }), pieces);
      expect(r.matches.map((m) => [m.line, m.before, m.after])).toEqual([
        [1, [], ["line 2", "line 3", "line 4"]],
        [6, ["line 5"], ["line 7", "line 8", "line 9"]],
        [11, ["line 10"], ["line 12", "line 13", "line 14"]],
        [16, ["line 15"], ["line 17", "line 18", "line 19"]],
      ]);
    }
  });

  it("stops at the limit and says there was more; counts; stops at the first match for files", () => {
    const spec = compilePattern("a", { fixedStrings: true, caseInsensitive: false });
    const limited = scanText(text, spec, content({ limit: 2 }));
    expect(limited.matches.length).toBe(2);
    expect(limited.more).toBe(true);
    expect(scanText(text, spec, content({ mode: "count" })).count).toBe(reference(text, /a/).length);
    expect(scanText(text, spec, content({ mode: "files" })).count).toBe(1);
  });

  it("handles a last line without LF and an empty file", () => {
    const spec = compilePattern("z$", { fixedStrings: false, caseInsensitive: false });
    expect(scanText("a\nbz", spec, content()).matches.map((m) => m.line)).toEqual([2]);
    expect(scanText("", compilePattern("", { fixedStrings: false, caseInsensitive: false }), content()).matches).toEqual([]);
    expect(scanText("a\n", compilePattern("", { fixedStrings: true, caseInsensitive: false }), content()).matches.map((m) => m.line)).toEqual([1]);
  });
});

describe("worker file scan", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "search-unit-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const scanPath = (name: string, data: string | Buffer, pattern: string, options = content()) => {
    const file = path.join(dir, name);
    writeFileSync(file, data);
    const fd = openSync(file, "r");
    try {
      return scanFile(fd, new Matcher(compilePattern(pattern, { fixedStrings: false, caseInsensitive: false })), options);
    } finally {
      closeSync(fd);
    }
  };

  it("skips binary files, reads UTF-16 with a BOM, and scans files bigger than one read", () => {
    expect(scanPath("bin", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2]), "x").kind).toBe("binary");
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("one\ntwo x\n", "utf16le")]);
    expect(scanPath("u16", utf16, "x")).toMatchObject({ kind: "text", matches: [{ line: 2, text: "two x" }] });
    const big = Array.from({ length: 400_000 }, (_, i) => (i === 333_333 ? "the needle here" : `row ${i}`)).join("\n");
    const r = scanPath("big", big, "needle", content({ before: 1 }));
    expect(r).toMatchObject({ kind: "text", bytes: Buffer.byteLength(big), matches: [{ line: 333_334, before: ["row 333332"] }] });
  });
});

describe("pool", () => {
  it("starts, answers, and a task aborted mid-backtracking frees its worker for the next one", async () => {
    const pool = await SearchPool.start(1);
    try {
      const file = path.join(tmpdir(), `search-pool-${process.pid}`);
      writeFileSync(file, "a".repeat(30) + "!\nfine\n");
      const fd = openSync(file, "r");
      try {
        // (a+)+$ with a backreference cannot fall back to the linear engine: only the abort stops it.
        const evil = compilePattern("(a+)+\\1$", { fixedStrings: false, caseInsensitive: false });
        const controller = new AbortController();
        const lease = newLease();
        const alone = { foundBefore: 0, running: [], progress: new SharedArrayBuffer(4), paths: "/f" }; // no tasks before it
        const stuck = pool.run({ pattern: evil, options: content(), files: { fd }, maxFileSize: 0, lease: lease.buffer as SharedArrayBuffer, ...alone }, controller.signal);
        setTimeout(() => controller.abort(), 300);
        await expect(stuck).rejects.toThrow(/abort/i);
        // The worker had started with the descriptor: it is the caller's again only once that thread has exited.
        const worker = revokeTask(lease);
        expect(worker).toBeGreaterThan(0);
        await pool.exited(worker!);
        const ok = await pool.run({ pattern: compilePattern("fine", { fixedStrings: true, caseInsensitive: false }), options: content(), files: { fd }, maxFileSize: 0, lease: new SharedArrayBuffer(8), ...alone }, new AbortController().signal);
        expect(ok).toMatchObject({ kinds: new Uint8Array([0]), hits: [{ index: 0, count: 1 }] });
        expect(fromBinary(SearchResponseSchema, ok.hits[0]!.matches!.bytes).event).toMatchObject({ case: "match", value: { path: "/f", lineNumber: 2n, line: "fine" } });
        // Without the backreference the linear-engine fallback answers at once.
        const linear = await pool.run({ pattern: compilePattern("(a+)+$", { fixedStrings: false, caseInsensitive: false }), options: content(), files: { fd }, maxFileSize: 0, lease: new SharedArrayBuffer(8), ...alone }, AbortSignal.timeout(10_000));
        expect(linear).toMatchObject({ kinds: new Uint8Array([0]), hits: [] });
      } finally {
        closeSync(fd);
        rmSync(file);
      }
    } finally {
      await pool.close();
    }
  });
});

describe("binary detection in the worker", () => {
  it("agrees with looksBinary", async () => {
    const { looksBinary } = await import("../text/binary.js");
    const dir = mkdtempSync(path.join(tmpdir(), "search-bin-"));
    try {
      const samples = [
        Buffer.from("plain text\n"),
        Buffer.from("\x1b[31mred\x1b[0m\n"),
        Buffer.from("a\x01b\x02c\x03d\x04e\x05\n"),
        Buffer.from("%PDF-1.4\n"),
        Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("wide\n", "utf16le")]),
        Buffer.from([0x7f, 0x45, 0x4c, 0x46, 1, 2]),
        Buffer.from("x\0y"),
        Buffer.alloc(0),
      ];
      for (const [i, sample] of samples.entries()) {
        const file = path.join(dir, `s${i}`);
        writeFileSync(file, sample);
        const fd = openSync(file, "r");
        try {
          const outcome = scanFile(fd, new Matcher(compilePattern("zzz", { fixedStrings: true, caseInsensitive: false })), content());
          expect(outcome.kind === "binary", `sample ${i}`).toBe(looksBinary(sample, "utf-8"));
        } finally {
          closeSync(fd);
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a line longer than the worker's buffer", () => {
  it("is searched in pieces, with the right line numbers", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "search-long-"));
    try {
      const file = path.join(dir, "long");
      writeFileSync(file, "first\n" + "x".repeat(20 << 20) + "needle\nlast needle\n");
      const fd = openSync(file, "r");
      try {
        const r = scanFile(fd, new Matcher(compilePattern("needle", { fixedStrings: true, caseInsensitive: false })), content());
        expect(r.kind === "text" && r.matches.map((m) => [m.line, m.cut])).toEqual([
          [2, true],
          [3, false],
        ]);
      } finally {
        closeSync(fd);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("encoded matches", () => {
  const matches = [
    { line: 3, column: 2, text: "a needle", cut: false, before: ["one", "two"], after: [] },
    { line: 9, column: 1, text: "n".repeat(500), cut: true, before: [], after: ["é after"] },
    { line: 10, column: 5, text: "", cut: false, before: [], after: [] },
    // Varints of several bytes, multi-byte UTF-8, lengths over 127.
    { line: 3_000_000_017, column: 70_000, text: "🙂 naïve ".repeat(40), cut: false, before: ["x".repeat(300)], after: ["数据", ""] },
  ];
  const expected = matches.map((m) => ({ path: "/d/ü.txt", lineNumber: BigInt(m.line), column: m.column, line: m.text, lineCut: m.cut, before: m.before, after: m.after }));

  it("each match is a whole SearchResponse `match`, cut at its end", () => {
    const { bytes, ends } = encodeMatches("/d/ü.txt", matches);
    expect(ends.at(-1)).toBe(bytes.length);
    ends.forEach((end, i) => {
      const response = fromBinary(SearchResponseSchema, bytes.subarray(i === 0 ? 0 : ends[i - 1], end));
      expect(response.event).toMatchObject({ case: "match", value: expected[i] });
    });
  });

  it("any run of them, framed, is a SearchResponse `matches` in order", () => {
    const { bytes, ends } = encodeMatches("/d/ü.txt", matches);
    const response = fromBinary(SearchResponseSchema, matchesResponse([bytes.subarray(0, ends[0]), bytes.subarray(ends[0], ends.at(-1))]));
    expect(response.event.case).toBe("matches");
    expect(response.event.case === "matches" && response.event.value.matches).toMatchObject(expected);
    // A lone surrogate (a UTF-16LE file's) is counted and written as U+FFFD alike: the framing holds.
    const odd = encodeMatches("/u16.txt", [{ line: 1, column: 1, text: "a\uD800b", cut: false, before: ["\uDC00"], after: [] }]);
    expect(fromBinary(SearchResponseSchema, odd.bytes).event).toMatchObject({ case: "match", value: { line: "a\uFFFDb", before: ["\uFFFD"] } });
    const none = encodeMatches("/x", []);
    expect([none.bytes.length, none.ends]).toEqual([0, []]);
  });
});
