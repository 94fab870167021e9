import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileToolsError } from "../errors.js";
import type { TextEncoding } from "../text/encoding.js";
import { countLines, type LineChunk, type LineTrailer } from "../text/lines.js";
import { readFile, type ReadHeader } from "../tools/read.js";
import { statPath } from "../tools/stat.js";
import { parsePath } from "../workspace/paths.js";
import { Workspace } from "../workspace/workspace.js";
import { LineIndex, WINDOW_READ_BYTES, type LineIndexOptions } from "./line-index.js";
import { indexedLineWindow } from "./window.js";

/** An in-memory file that counts the bytes read through it. */
class MemFile {
  bytesRead = 0;
  /** What currentVersion() answers: set it to simulate a change while indexing. */
  versionNow: string;
  readonly entry: { version: string; size: bigint; path: string };
  /** Runs before each read (to change the file under a scan). */
  onRead?: (position: number) => void;

  constructor(
    public data: Buffer,
    version = "v1",
    private readonly chunkBytes = 4096,
  ) {
    this.entry = { version, size: BigInt(data.length), path: "/f.txt" };
    this.versionNow = version;
  }

  async readAt(position: number, length: number): Promise<Buffer> {
    this.onRead?.(position);
    await Promise.resolve();
    const out = Buffer.from(this.data.subarray(position, position + length));
    this.bytesRead += out.length;
    return out;
  }

  async readInto(buffer: Buffer, position: number): Promise<number> {
    const bytes = await this.readAt(position, buffer.length);
    bytes.copy(buffer);
    return bytes.length;
  }

  async *chunks(position = 0): AsyncGenerator<Buffer> {
    for (;;) {
      const chunk = await this.readAt(position, this.chunkBytes);
      if (chunk.length === 0) return;
      position += chunk.length;
      yield chunk;
    }
  }

  async currentVersion(): Promise<string> {
    return this.versionNow;
  }
}

/** Lines of `text` with their endings, split the plain way. */
function referenceLines(text: string): string[] {
  const lines = text.split(/(?<=\n)/);
  return lines.length === 1 && lines[0] === "" ? [] : lines;
}

async function windowText(
  index: LineIndex,
  file: MemFile,
  encoding: TextEncoding,
  startLine: number,
  lineCount?: number,
): Promise<{ text: string; trailer: LineTrailer }> {
  const window = await indexedLineWindow(index, file, { encoding, startLine, lineCount, maxBytes: 1 << 30 });
  let text = "";
  for (;;) {
    const next = await window.next();
    if (next.done) return { text, trailer: next.value };
    text += next.value.text;
  }
}

/** Deterministic pseudo-random numbers. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const PIECES = ["a", "bc", "é", "日本語", "😀", "\u0a05", "\u010a", " ", "x".repeat(40), "\r"];

function sampleText(lines: number, seed: number, eol: "\n" | "\r\n"): string {
  const random = rng(seed);
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const parts = Math.floor(random() * 8);
    let line = `${i + 1}:`;
    for (let j = 0; j < parts; j++) line += PIECES[Math.floor(random() * PIECES.length)]!;
    out.push(line + eol);
  }
  return out.join("");
}

const SMALL: LineIndexOptions = { lineStride: 16, byteStride: 2048, scanChunkBytes: 1001 };

async function checkRandomWindows(text: string, data: Buffer, encoding: TextEncoding, seed: number, options = SMALL): Promise<void> {
  const reference = referenceLines(text);
  const index = new LineIndex(options);
  const file = new MemFile(data);
  const random = rng(seed);
  for (let k = 0; k < 60; k++) {
    const startLine = 1 + Math.floor(random() * (reference.length + 5));
    const lineCount = Math.floor(random() * 40);
    const { text: got, trailer } = await windowText(index, file, encoding, startLine, lineCount);
    const want = reference.slice(startLine - 1, startLine - 1 + lineCount).join("");
    expect(got, `window ${startLine}+${lineCount}`).toBe(want);
    if (trailer.eof && lineCount > 0) expect(trailer.totalLines).toBe(reference.length);
  }
}

describe("windows at random offsets equal a split reference", () => {
  it("UTF-8 with multi-byte characters and CRLF", async () => {
    const text = sampleText(3000, 1, "\r\n");
    await checkRandomWindows(text, Buffer.from(text, "utf8"), "utf-8", 11);
  });

  it("UTF-8 with a BOM and no final newline", async () => {
    const text = sampleText(2000, 2, "\n") + "last line without newline é";
    await checkRandomWindows(text, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, "utf8")]), "utf-8", 12);
  });

  it("UTF-16LE with a BOM (line feeds only on code units, 0A inside characters ignored)", async () => {
    const text = sampleText(2000, 3, "\r\n");
    await checkRandomWindows(text, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]), "utf-16le", 13);
  });

  it("UTF-8 with long lines (checkpoints by bytes), SIMD and indexOf searches", async () => {
    const random = rng(21);
    const lines = Array.from({ length: 800 }, (_, i) => `${i + 1}:${"é".repeat(Math.floor(random() * 1500))}${random() < 0.5 ? "\r" : ""}\n`);
    const text = lines.join("");
    for (const portable of [false, true]) {
      await checkRandomWindows(text, Buffer.from(text, "utf8"), "utf-8", 22, { lineStride: 64, byteStride: 1000, scanChunkBytes: 4096, portable });
    }
  });

  it("UTF-8 with the indexOf search (no WebAssembly)", async () => {
    const text = sampleText(3000, 6, "\r\n");
    await checkRandomWindows(text, Buffer.from(text, "utf8"), "utf-8", 23, { ...SMALL, portable: true });
  });

  it("latin1 and UTF-8 readings of one file are indexed apart", async () => {
    const data = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("a\nb\n")]);
    const index = new LineIndex(SMALL);
    const file = new MemFile(data);
    expect((await windowText(index, file, "latin1", 1, 1)).text).toBe("ï»¿a\n");
    expect((await windowText(index, file, "utf-8", 1, 1)).text).toBe("a\n");
    expect(index.fileCount).toBe(2);
  });
});

describe("a file seen once", () => {
  const text = sampleText(200_000, 4, "\n");
  const data = Buffer.from(text, "utf8");
  const reference = referenceLines(text);

  it("serves a second deep window without rescanning from the start", async () => {
    const index = new LineIndex({ lineStride: 256, byteStride: 64 * 1024 });
    const file = new MemFile(data);
    const first = await windowText(index, file, "utf-8", 180_000, 50);
    expect(first.text).toBe(reference.slice(179_999, 180_049).join(""));
    const deep = Buffer.byteLength(reference.slice(0, 179_999).join(""));
    expect(file.bytesRead).toBeGreaterThan(deep);

    file.bytesRead = 0;
    const second = await windowText(index, file, "utf-8", 90_001, 50);
    expect(second.text).toBe(reference.slice(90_000, 90_050).join(""));
    // At most a stride before the window plus the window: one read of WINDOW_READ_BYTES, not the ~7 MB before it.
    expect(file.bytesRead).toBeLessThanOrEqual(WINDOW_READ_BYTES);
    expect(deep).toBeGreaterThan(20 * WINDOW_READ_BYTES);

    file.bytesRead = 0;
    await windowText(index, file, "utf-8", 179_990, 50);
    expect(file.bytesRead).toBeLessThanOrEqual(WINDOW_READ_BYTES);
  });

  it("extends from the furthest known line rather than from line 1", async () => {
    const index = new LineIndex({ lineStride: 256 });
    const file = new MemFile(data);
    const at = await index.seek(file, "utf-8", 100_000);
    expect(at).toEqual({ line: 100_000, offset: Buffer.byteLength(reference.slice(0, 99_999).join("")) });
    file.bytesRead = 0;
    await index.seek(file, "utf-8", 200_000);
    // The rest of the file (the chunk in hand was indexed to its end), not all of it.
    expect(file.bytesRead).toBeLessThanOrEqual(data.length - at.offset);
  });

  it("shares one scan between concurrent first readers", async () => {
    const index = new LineIndex();
    const files = Array.from({ length: 8 }, () => new MemFile(data, "same-version"));
    const windows = await Promise.all(files.map((file, i) => windowText(index, file, "utf-8", 190_000 + i * 10, 5)));
    windows.forEach((w, i) => expect(w.text).toBe(reference.slice(189_999 + i * 10, 190_004 + i * 10).join("")));
    const total = files.reduce((sum, f) => sum + f.bytesRead, 0);
    // One scan (1 MiB reads, so up to the end of the file) plus eight small windows.
    expect(total).toBeLessThanOrEqual(data.length + 8 * WINDOW_READ_BYTES);
  });

  it("knows total_lines once a scan or a window reaches the end", async () => {
    const index = new LineIndex();
    const file = new MemFile(data);
    await windowText(index, file, "utf-8", 100, 10);
    expect(index.knownTotalLines(file, "utf-8")).toBeUndefined();
    expect(await index.totalLines(file, "utf-8")).toBe(reference.length);
    expect(index.knownTotalLines(file, "utf-8")).toBe(reference.length);
    file.bytesRead = 0;
    expect(await index.totalLines(file, "utf-8")).toBe(reference.length);
    expect(file.bytesRead).toBe(0);

    const other = new LineIndex();
    const tailFile = new MemFile(data);
    const end = await windowText(other, tailFile, "utf-8", 199_990);
    expect(end.trailer.totalLines).toBe(reference.length);
    expect(other.knownTotalLines(tailFile, "utf-8")).toBe(reference.length);
  });

  it("still builds checkpoints for deep windows when a window from line 1 to the end gave the count", async () => {
    const index = new LineIndex({ lineStride: 256, byteStride: 64 * 1024 });
    const file = new MemFile(data);
    const whole = await windowText(index, file, "utf-8", 1);
    expect(whole.trailer.totalLines).toBe(reference.length);
    expect(index.knownTotalLines(file, "utf-8")).toBe(reference.length);
    await windowText(index, file, "utf-8", 150_000, 50);
    file.bytesRead = 0;
    const deep = await windowText(index, file, "utf-8", 150_101, 50);
    expect(deep.text).toBe(reference.slice(150_100, 150_150).join(""));
    // From a checkpoint near the window, not by skipping lines from line 1.
    expect(file.bytesRead).toBeLessThanOrEqual(WINDOW_READ_BYTES);
  });
});

describe("line counts agree with countLines", () => {
  const cases: [string, Buffer, TextEncoding][] = [
    ["empty", Buffer.alloc(0), "utf-8"],
    ["a lone BOM", Buffer.from([0xef, 0xbb, 0xbf]), "utf-8"],
    ["a lone BOM read as latin1", Buffer.from([0xef, 0xbb, 0xbf]), "latin1"],
    ["one newline", Buffer.from("\n"), "utf-8"],
    ["no final newline", Buffer.from("a\nb"), "utf-8"],
    ["UTF-16LE BOM only", Buffer.from([0xff, 0xfe]), "utf-16le"],
    ["UTF-16LE with an odd last byte", Buffer.concat([Buffer.from("a\nb\n", "utf16le"), Buffer.from([0x41])]), "utf-16le"],
    ["UTF-16LE ending in a line feed", Buffer.from("\ufeffa\nb\n", "utf16le"), "utf-16le"],
  ];
  for (const [name, data, encoding] of cases) {
    it(name, async () => {
      const index = new LineIndex(SMALL);
      expect(await index.totalLines(new MemFile(data), encoding)).toBe(await countLines(new MemFile(data).chunks(), encoding));
    });
  }
});

describe("memory bounds", () => {
  it("evicts the least recently used files to stay within the byte budget", async () => {
    const index = new LineIndex({ lineStride: 1, budgetBytes: 20_000 });
    const data = Buffer.from("x\n".repeat(500));
    const files = Array.from({ length: 30 }, (_, i) => new MemFile(data, `v${i}`));
    for (const file of files) {
      await index.totalLines(file, "utf-8");
      expect(index.usedBytes).toBeLessThanOrEqual(20_000);
    }
    expect(index.fileCount).toBeLessThan(30);
    expect(index.knownTotalLines(files[0]!, "utf-8")).toBeUndefined();
    expect(index.knownTotalLines(files[29]!, "utf-8")).toBe(500);
  });

  it("runs at most maxConcurrentScans scans at once (each holds two read buffers); the others wait their turn", async () => {
    const index = new LineIndex({ maxConcurrentScans: 2, scanChunkBytes: 4096 });
    const data = Buffer.from("some line\n".repeat(5000));
    let most = 0;
    const files = Array.from({ length: 10 }, (_, i) => {
      const file = new MemFile(data, `v${i}`);
      file.onRead = () => (most = Math.max(most, index.scansInFlight));
      return file;
    });
    const totals = await Promise.all(files.map((file) => index.totalLines(file, "utf-8")));
    expect(totals).toEqual(Array(10).fill(5000));
    expect(most).toBe(2);
    expect(index.scansInFlight).toBe(0);
  });

  it("thins a file's checkpoints past the per-file cap and still serves exact windows", async () => {
    const text = sampleText(5000, 5, "\n");
    const reference = referenceLines(text);
    const index = new LineIndex({ lineStride: 1, maxCheckpointsPerFile: 64 });
    const file = new MemFile(Buffer.from(text));
    expect(await index.totalLines(file, "utf-8")).toBe(5000);
    expect(index.usedBytes).toBeLessThanOrEqual(512 + 64 * 16);
    for (const start of [1, 77, 2500, 4999]) {
      expect((await windowText(index, file, "utf-8", start, 3)).text).toBe(reference.slice(start - 1, start + 2).join(""));
    }
  });
});

describe("a file that changes while it is indexed", () => {
  const data = Buffer.from("line\n".repeat(10_000));

  it("fails with CONTENT_CHANGED and keeps nothing of that version", async () => {
    const index = new LineIndex({ scanChunkBytes: 4096 });
    const file = new MemFile(data);
    file.onRead = (position) => {
      if (position > 20_000) file.versionNow = "v2";
    };
    const error = await index.totalLines(file, "utf-8").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FileToolsError);
    expect((error as FileToolsError).reason).toBe("CONTENT_CHANGED");
    expect(index.fileCount).toBe(0);
    expect(index.knownTotalLines(file, "utf-8")).toBeUndefined();
  });

  it("fails with CONTENT_CHANGED when the file is shorter than the version it was opened as", async () => {
    const index = new LineIndex({ scanChunkBytes: 4096 });
    const file = new MemFile(data);
    file.data = data.subarray(0, 30_000);
    const error = await index.seek(file, "utf-8", 9_000).catch((e: unknown) => e);
    expect((error as FileToolsError).reason).toBe("CONTENT_CHANGED");
    expect(index.fileCount).toBe(0);
  });

  it("an aborted first reader keeps its verified progress; a concurrent reader still gets its window", async () => {
    const index = new LineIndex({ scanChunkBytes: 4096 });
    const abort = new AbortController();
    const first = new MemFile(data);
    first.onRead = (position) => {
      if (position > 20_000) abort.abort(new Error("cancelled"));
    };
    const aborted = index.seek(first, "utf-8", 9_000, abort.signal).catch((e: Error) => e.message);
    const second = new MemFile(data);
    const window = windowText(index, second, "utf-8", 9_000, 2);
    expect(await aborted).toBe("cancelled");
    expect((await window).text).toBe("line\nline\n");
    // It went on from where the aborted scan stopped (about 28 KB in), not from line 1.
    expect(second.bytesRead).toBeLessThan(40_000);
  });
});

describe("through the workspace and the Read and Stat tools", () => {
  let base: string;
  let workspace: Workspace;
  beforeEach(async () => {
    base = mkdtempSync(path.join(tmpdir(), "lineindex-test-"));
    workspace = await Workspace.open("test", base, true);
  });
  afterEach(async () => {
    await workspace.close();
    rmSync(base, { recursive: true, force: true });
  });

  const write = (text: string) => workspace.writeFile(parsePath("big.txt"), Buffer.from(text), { createDirs: true, mode: "create-or-replace" });

  async function read(index: LineIndex, options: { startLine?: number; lineCount?: number; tailLines?: number }) {
    const parts: (ReadHeader | LineChunk)[] = [];
    const gen = readFile(
      workspace,
      "big.txt",
      {
        encoding: "",
        startLine: options.startLine === undefined ? undefined : BigInt(options.startLine),
        lineCount: options.lineCount === undefined ? undefined : BigInt(options.lineCount),
        tailLines: options.tailLines === undefined ? undefined : BigInt(options.tailLines),
      },
      1 << 30,
      new AbortController().signal,
      index,
    );
    for (;;) {
      const next = await gen.next();
      if (next.done) {
        const header = parts[0] as ReadHeader;
        const text = (parts.slice(1) as LineChunk[]).map((c) => c.text).join("");
        return { header, text, trailer: next.value };
      }
      parts.push(next.value);
    }
  }

  const numbered = (from: number, to: number, tag: string) =>
    Array.from({ length: to - from + 1 }, (_, i) => `${tag} ${from + i}\n`).join("");

  it("drops the index of a file replaced through the workspace", async () => {
    const index = new LineIndex({ lineStride: 64 });
    await write(numbered(1, 50_000, "old"));
    expect((await read(index, { startLine: 40_000, lineCount: 2 })).text).toBe("old 40000\nold 40001\n");
    await write("short\n" + numbered(2, 60_000, "new"));
    expect((await read(index, { startLine: 40_000, lineCount: 2 })).text).toBe("new 40000\nnew 40001\n");
  });

  it("sees an in-place append as a new version", async () => {
    const index = new LineIndex({ lineStride: 64 });
    await write(numbered(1, 1000, "l"));
    expect((await read(index, { tailLines: 1 })).header.totalLines).toBe(1000);
    await workspace.appendFile(parsePath("big.txt"), Buffer.from(numbered(1001, 1200, "l")), { createDirs: false });
    const tail = await read(index, { tailLines: 2 });
    expect(tail.header.totalLines).toBe(1200);
    expect(tail.text).toBe("l 1199\nl 1200\n");
    expect((await read(index, { startLine: 1100, lineCount: 1 })).text).toBe("l 1100\n");
  });

  it("reports total_lines in Read's header once known, and Stat's line_count fills the index", async () => {
    const index = new LineIndex();
    await write(numbered(1, 300_000, "t")); // 2.7 MB: a first scan to line 10 reads 1 MiB of it
    expect((await read(index, { startLine: 10, lineCount: 1 })).header.totalLines).toBeUndefined();
    const stat = await statPath(workspace, "big.txt", { detectBinary: false, countLines: true }, index);
    expect(stat.lineCount).toBe(300_000n);
    const later = await read(index, { startLine: 299_999, lineCount: 5 });
    expect(later.header.totalLines).toBe(300_000);
    expect(later.text).toBe("t 299999\nt 300000\n");
    const tail = await read(index, { tailLines: 3 });
    expect(tail.text).toBe("t 299998\nt 299999\nt 300000\n");
  });
});
