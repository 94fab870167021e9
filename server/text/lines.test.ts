import { describe, expect, it } from "vitest";
import { FileToolsError } from "../errors.js";
import type { TextEncoding } from "./encoding.js";
import {
  countLines,
  READ_CHUNK_BYTES,
  readLineWindow,
  readLineWindowAt,
  tailLines,
  type LineChunk,
  type LineTrailer,
  type LineWindow,
  type LineWindowOptions,
  type ReadAt,
} from "./lines.js";

/** A byte stream in chunks of `size` bytes, recording how many it gave and whether it was closed. */
function streamOf(bytes: Buffer, size = 65536) {
  const stats = { pulled: 0, closed: false };
  const source: AsyncIterable<Buffer> = {
    [Symbol.asyncIterator]() {
      let pos = 0;
      return {
        async next() {
          if (pos >= bytes.length) return { done: true, value: undefined };
          stats.pulled++;
          const chunk = Buffer.from(bytes.subarray(pos, pos + size));
          pos += size;
          return { done: false, value: chunk };
        },
        async return() {
          stats.closed = true;
          return { done: true, value: undefined };
        },
      };
    },
  };
  return { source, stats };
}

async function drain(window: LineWindow): Promise<{ chunks: LineChunk[]; text: string; trailer: LineTrailer }> {
  const chunks: LineChunk[] = [];
  for (;;) {
    const next = await window.next();
    if (next.done) return { chunks, text: chunks.map((c) => c.text).join(""), trailer: next.value };
    chunks.push(next.value);
  }
}

const read = (bytes: Buffer | string, options: Partial<LineWindowOptions> = {}, chunkSize?: number) =>
  drain(
    readLineWindow(streamOf(typeof bytes === "string" ? Buffer.from(bytes) : bytes, chunkSize).source, {
      encoding: "utf-8",
      maxBytes: 10 * 1024 * 1024,
      ...options,
    }),
  );

const readAtOf =
  (bytes: Buffer): ReadAt =>
  async (position, length) =>
    Buffer.from(bytes.subarray(position, position + length));

async function tail(bytes: Buffer | string, n: number, encoding: TextEncoding = "utf-8", maxBytes = 10 * 1024 * 1024) {
  const buf = typeof bytes === "string" ? Buffer.from(bytes) : bytes;
  const result = await tailLines(readAtOf(buf), buf.length, n, encoding, maxBytes);
  return { ...result, ...(await drain(result.chunks)) };
}

/** The lines of decoded text, each with its line ending. */
const linesOf = (text: string): string[] => text.match(/[^\n]*\n|[^\n]+$/g) ?? [];

async function rejection(promise: Promise<unknown>): Promise<FileToolsError> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof FileToolsError) return e;
    throw e;
  }
  throw new Error("expected a FileToolsError");
}

describe("readLineWindow: whole files", () => {
  it("returns every line with its ending and counts them at the end", async () => {
    const { chunks, trailer } = await read("one\ntwo\nthree\n");
    expect(chunks).toEqual([{ firstLine: 1, text: "one\ntwo\nthree\n" }]);
    expect(trailer).toEqual({
      linesReturned: 3,
      bytesReturned: 14,
      nextLine: 0,
      truncated: false,
      eof: true,
      lineCut: false,
      totalLines: 3,
    });
  });

  it("counts a last line without a newline", async () => {
    const { text, trailer } = await read("one\ntwo");
    expect(text).toBe("one\ntwo");
    expect(trailer).toMatchObject({ linesReturned: 2, totalLines: 2, eof: true, nextLine: 0 });
  });

  it("gives an empty file no lines", async () => {
    const { chunks, trailer } = await read("");
    expect(chunks).toEqual([]);
    expect(trailer).toMatchObject({ linesReturned: 0, bytesReturned: 0, totalLines: 0, eof: true, nextLine: 0 });
  });

  it("gives a lone newline one empty line", async () => {
    const { text, trailer } = await read("\n");
    expect(text).toBe("\n");
    expect(trailer).toMatchObject({ linesReturned: 1, totalLines: 1 });
  });

  it("keeps CRLF line endings as they are", async () => {
    const { text, trailer } = await read("a\r\nb\r\n\r\nc");
    expect(text).toBe("a\r\nb\r\n\r\nc");
    expect(trailer).toMatchObject({ linesReturned: 4, totalLines: 4 });
  });

  it("skips a UTF-8 BOM, and a BOM alone is an empty file", async () => {
    expect((await read(Buffer.from([0xef, 0xbb, 0xbf, 0x68, 0x69, 0x0a]))).text).toBe("hi\n");
    const bomOnly = await read(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(bomOnly.trailer).toMatchObject({ linesReturned: 0, totalLines: 0 });
  });

  it("skips a BOM that arrives in 1-byte chunks", async () => {
    const { text } = await read(Buffer.from([0xef, 0xbb, 0xbf, 0x68, 0x69]), {}, 1);
    expect(text).toBe("hi");
  });

  it("does not split multi-byte characters fed in 1-byte chunks", async () => {
    const content = "héllo\nwörld €\n😀😀 end\r\nnaïve";
    for (const size of [1, 2, 3, 5, 7]) {
      const { text, trailer } = await read(Buffer.from(content), {}, size);
      expect(text).toBe(content);
      expect(trailer).toMatchObject({ linesReturned: 4, totalLines: 4, bytesReturned: Buffer.byteLength(content) });
    }
  });

  it("turns invalid bytes into U+FFFD and counts the UTF-8 of the replacement", async () => {
    const { text, trailer } = await read(Buffer.from([0x61, 0xff, 0x0a, 0xe2, 0x82, 0x0a]));
    expect(text).toBe("a\uFFFD\n\uFFFD\n");
    expect(trailer.bytesReturned).toBe(Buffer.byteLength("a\uFFFD\n\uFFFD\n"));
  });

  it("decodes latin1 and counts UTF-8 bytes of the result", async () => {
    const { text, trailer } = await read(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]), { encoding: "latin1" });
    expect(text).toBe("café\n");
    expect(trailer.bytesReturned).toBe(6);
  });

  it("does not skip a UTF-8 BOM in latin1", async () => {
    const { text } = await read(Buffer.from([0xef, 0xbb, 0xbf, 0x61]), { encoding: "latin1" });
    expect(text).toBe("ï»¿a");
  });
});

describe("readLineWindow: windows", () => {
  const five = "1\n2\n3\n4\n5\n";

  it("returns a window in the middle, without knowing the total", async () => {
    const { chunks, trailer } = await read(five, { startLine: 2, lineCount: 2 });
    expect(chunks).toEqual([{ firstLine: 2, text: "2\n3\n" }]);
    expect(trailer).toEqual({ linesReturned: 2, bytesReturned: 4, nextLine: 4, truncated: false, eof: false, lineCut: false });
  });

  it("returns a window at the start", async () => {
    const { text, trailer } = await read(five, { lineCount: 1 });
    expect(text).toBe("1\n");
    expect(trailer).toMatchObject({ nextLine: 2, eof: false });
  });

  it("reports the end when a window stops exactly at the last line", async () => {
    const { text, trailer } = await read(five, { startLine: 4, lineCount: 2 });
    expect(text).toBe("4\n5\n");
    expect(trailer).toMatchObject({ nextLine: 0, eof: true, totalLines: 5 });
  });

  it("reports the end when a window asks for more lines than remain", async () => {
    const { text, trailer } = await read("1\n2\n3", { startLine: 3, lineCount: 10 });
    expect(text).toBe("3");
    expect(trailer).toMatchObject({ linesReturned: 1, nextLine: 0, eof: true, totalLines: 3, truncated: false });
  });

  it("returns nothing past the end, with the line count", async () => {
    expect((await read(five, { startLine: 6 })).trailer).toEqual({
      linesReturned: 0,
      bytesReturned: 0,
      nextLine: 0,
      truncated: false,
      eof: true,
      lineCut: false,
      totalLines: 5,
    });
    expect((await read(five, { startLine: 99, lineCount: 3 })).trailer).toMatchObject({ eof: true, totalLines: 5 });
    expect((await read("1\n2", { startLine: 3 })).trailer).toMatchObject({ eof: true, totalLines: 2 });
    expect((await read("", { startLine: 2 })).trailer).toMatchObject({ eof: true, totalLines: 0 });
  });

  it("reads nothing at all for lineCount 0", async () => {
    const { source, stats } = streamOf(Buffer.from(five));
    const { chunks, trailer } = await drain(readLineWindow(source, { encoding: "utf-8", maxBytes: 100, startLine: 3, lineCount: 0 }));
    expect(chunks).toEqual([]);
    expect(trailer).toEqual({ linesReturned: 0, bytesReturned: 0, nextLine: 3, truncated: false, eof: false, lineCut: false });
    expect(stats.pulled).toBe(0);
  });

  it("stops reading the source once the window is complete, and closes it", async () => {
    const big = Buffer.from("line\n".repeat(100_000));
    const { source, stats } = streamOf(big, 1000);
    const { text, trailer } = await drain(readLineWindow(source, { encoding: "utf-8", maxBytes: 1000, startLine: 10, lineCount: 3 }));
    expect(text).toBe("line\n".repeat(3));
    expect(trailer).toMatchObject({ nextLine: 13, eof: false });
    expect(stats.pulled).toBe(1);
    expect(stats.closed).toBe(true);
  });

  it("numbers lines across many chunks when skipping", async () => {
    const content = Array.from({ length: 50_000 }, (_, i) => `line ${i + 1}\n`).join("");
    for (const size of [1, 7, 4096]) {
      const { chunks } = await read(content, { startLine: 4321, lineCount: 2 }, size);
      expect(chunks).toEqual([{ firstLine: 4321, text: "line 4321\nline 4322\n" }]);
    }
  });

  it("refuses a start line below 1 and a negative count", async () => {
    expect((await rejection(read(five, { startLine: 0 }))).reason).toBe("INVALID_ARGUMENT");
    expect((await rejection(read(five, { lineCount: -1 }))).reason).toBe("INVALID_ARGUMENT");
    expect((await rejection(read(five, { maxBytes: 0 }))).reason).toBe("INVALID_ARGUMENT");
  });
});

describe("readLineWindow: max_bytes", () => {
  const ten = "aaaa\n".repeat(10);

  it("returns only whole lines that fit and says where to continue", async () => {
    const { text, trailer } = await read(ten, { maxBytes: 12 });
    expect(text).toBe("aaaa\naaaa\n");
    expect(trailer).toEqual({ linesReturned: 2, bytesReturned: 10, nextLine: 3, truncated: true, eof: false, lineCut: false });
  });

  it("is truncated when max_bytes is used up exactly and lines remain", async () => {
    const { trailer } = await read(ten, { maxBytes: 10 });
    expect(trailer).toMatchObject({ linesReturned: 2, nextLine: 3, truncated: true });
  });

  it("is not truncated when the window fits exactly", async () => {
    const { trailer } = await read(ten, { maxBytes: 10, lineCount: 2 });
    expect(trailer).toMatchObject({ linesReturned: 2, nextLine: 3, truncated: false });
    const whole = await read("aaaa\n", { maxBytes: 5 });
    expect(whole.trailer).toMatchObject({ truncated: false, eof: true, totalLines: 1 });
  });

  it("counts max_bytes in UTF-8 of the decoded text", async () => {
    // "é" is one latin1 byte but two UTF-8 bytes: two lines of 3 bytes on disk are 4 each in UTF-8.
    const { text, trailer } = await read(Buffer.from([0xe9, 0xe9, 0x0a, 0xe9, 0xe9, 0x0a]), { encoding: "latin1", maxBytes: 7 });
    expect(text).toBe("éé\n");
    expect(trailer).toMatchObject({ bytesReturned: 5, truncated: true, nextLine: 2 });
  });

  it("cuts a first line longer than max_bytes on a character boundary", async () => {
    // "ab" is 2 bytes; the emoji's 4 bytes would make 6.
    for (const maxBytes of [2, 3, 4, 5]) {
      const { chunks, trailer } = await read("ab😀cd\nnext\n", { maxBytes });
      expect(chunks).toEqual([{ firstLine: 1, text: "ab" }]);
      expect(trailer).toEqual({ linesReturned: 1, bytesReturned: 2, nextLine: 2, truncated: true, eof: false, lineCut: true });
    }
    expect((await read("ab😀cd\nnext\n", { maxBytes: 6 })).text).toBe("ab😀");
  });

  it("cuts a line in a later window the same way", async () => {
    const { chunks, trailer } = await read("short\nab😀cd\nnext\n", { startLine: 2, maxBytes: 5 });
    expect(chunks).toEqual([{ firstLine: 2, text: "ab" }]);
    expect(trailer).toMatchObject({ lineCut: true, nextLine: 3, truncated: true });
  });

  it("reports the end after cutting the last line", async () => {
    const { text, trailer } = await read("ab😀cd", { maxBytes: 3 });
    expect(text).toBe("ab");
    expect(trailer).toMatchObject({ lineCut: true, eof: true, nextLine: 0, totalLines: 1, truncated: false });
  });

  it("is not truncated when the cut line was the only line asked for", async () => {
    const { trailer } = await read("ab😀cd\nnext\n", { maxBytes: 3, lineCount: 1 });
    expect(trailer).toMatchObject({ lineCut: true, truncated: false, nextLine: 2 });
  });

  it("cuts a huge line without reading all of it", async () => {
    const huge = Buffer.concat([Buffer.from("😀".repeat(1_000_000)), Buffer.from("\nnext\n")]);
    const { source, stats } = streamOf(huge, 4096);
    const { text, trailer } = await drain(readLineWindow(source, { encoding: "utf-8", maxBytes: 1001 }));
    expect(text).toBe("😀".repeat(250));
    expect(trailer).toMatchObject({ bytesReturned: 1000, lineCut: true, nextLine: 2, eof: false });
    expect(stats.pulled).toBeLessThan(5);
  });

  it("cuts a UTF-16LE line between the halves of no surrogate pair", async () => {
    const bytes = Buffer.from("a😀😀b\nc\n", "utf16le");
    for (const size of [1, 3, 64]) {
      const { text, trailer } = await read(bytes, { encoding: "utf-16le", maxBytes: 8 }, size);
      expect(text).toBe("a😀");
      expect(trailer).toMatchObject({ bytesReturned: 5, lineCut: true, nextLine: 2 });
    }
  });
});

describe("readLineWindow: chunks", () => {
  it("sends whole lines in chunks of at most 64 KiB of UTF-8", async () => {
    const line = "é".repeat(999) + "\n"; // 1999 bytes
    const content = line.repeat(200);
    const { chunks, text, trailer } = await read(content);
    expect(text).toBe(content);
    expect(chunks.length).toBeGreaterThan(1);
    let expectedFirst = 1;
    for (const chunk of chunks) {
      expect(Buffer.byteLength(chunk.text)).toBeLessThanOrEqual(READ_CHUNK_BYTES);
      expect(chunk.text.endsWith("\n")).toBe(true);
      expect(chunk.firstLine).toBe(expectedFirst);
      expectedFirst += linesOf(chunk.text).length;
    }
    expect(trailer.linesReturned).toBe(200);
  });

  it("splits a line longer than a chunk between characters, each piece numbered with that line", async () => {
    const long = "x😀".repeat(20_000); // 100,000 bytes
    const { chunks, text } = await read(`a\n${long}\nb\n`);
    expect(text).toBe(`a\n${long}\nb\n`);
    for (const chunk of chunks) {
      expect(Buffer.byteLength(chunk.text)).toBeLessThanOrEqual(READ_CHUNK_BYTES);
      expect(chunk.text).not.toMatch(/[\uD800-\uDBFF]$/); // no half of a pair at the end
    }
    expect(chunks.map((c) => c.firstLine)).toEqual([1, 2, 2, 3]);
  });

  it("honours a smaller chunk size", async () => {
    const { chunks } = await drain(
      readLineWindow(streamOf(Buffer.from("aa\nbb\ncc\n")).source, { encoding: "utf-8", maxBytes: 100, chunkBytes: 6 }),
    );
    expect(chunks).toEqual([
      { firstLine: 1, text: "aa\nbb\n" },
      { firstLine: 3, text: "cc\n" },
    ]);
  });
});

describe("readLineWindow: UTF-16LE", () => {
  const withBom = (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]);

  it("skips the BOM and splits at line feed units only", async () => {
    // U+0A0A and U+010A contain the byte 0x0A, at an odd and an even offset.
    const content = "ਊ one\r\nĊ two\n😀\nlast";
    for (const size of [1, 3, 4, 1024]) {
      const { text, trailer } = await read(withBom(content), { encoding: "utf-16le" }, size);
      expect(text).toBe(content);
      expect(trailer).toMatchObject({ linesReturned: 4, totalLines: 4, bytesReturned: Buffer.byteLength(content) });
    }
  });

  it("windows UTF-16LE lines", async () => {
    const { chunks, trailer } = await read(withBom("1\n2\n3\n"), { encoding: "utf-16le", startLine: 2, lineCount: 1 }, 3);
    expect(chunks).toEqual([{ firstLine: 2, text: "2\n" }]);
    expect(trailer).toMatchObject({ nextLine: 3, eof: false });
  });

  it("decodes a dangling odd last byte as U+FFFD on a line of its own count", async () => {
    const bytes = Buffer.concat([Buffer.from("a\n", "utf16le"), Buffer.from([0x62])]);
    const { text, trailer } = await read(bytes, { encoding: "utf-16le" }, 1);
    expect(text).toBe("a\n\uFFFD");
    expect(trailer).toMatchObject({ totalLines: 2 });
  });
});

describe("countLines", () => {
  it.each([
    ["", 0],
    ["a", 1],
    ["a\n", 1],
    ["a\nb", 2],
    ["\n\n", 2],
    ["a\r\nb\r\n", 2],
  ])("counts %j as %i lines", async (content, expected) => {
    expect(await countLines(streamOf(Buffer.from(content), 1).source, "utf-8")).toBe(expected);
    expect(await countLines(streamOf(Buffer.from(content, "utf16le"), 3).source, "utf-16le")).toBe(expected);
  });

  it("does not count a BOM as a line", async () => {
    expect(await countLines(streamOf(Buffer.from([0xef, 0xbb, 0xbf])).source, "utf-8")).toBe(0);
    expect(await countLines(streamOf(Buffer.from([0xff, 0xfe, 0x0a, 0x00])).source, "utf-16le")).toBe(1);
  });
});

describe("tailLines", () => {
  it("returns the last lines of a file ending with a newline", async () => {
    const t = await tail("1\n2\n3\n4\n5\n", 2);
    expect(t.totalLines).toBe(5);
    expect(t.firstLine).toBe(4);
    expect(t.chunks).toBeDefined();
    expect(t.text).toBe("4\n5\n");
    expect(t.trailer).toEqual({
      linesReturned: 2,
      bytesReturned: 4,
      nextLine: 0,
      truncated: false,
      eof: true,
      lineCut: false,
      totalLines: 5,
    });
  });

  it("returns the last lines of a file without a final newline", async () => {
    const t = await tail("1\n2\n3", 2);
    expect(t).toMatchObject({ totalLines: 3, firstLine: 2, text: "2\n3" });
  });

  it("returns the whole file when it has fewer lines", async () => {
    const t = await tail("1\n2\n", 10);
    expect(t).toMatchObject({ totalLines: 2, firstLine: 1, text: "1\n2\n" });
  });

  it("counts empty lines at the end", async () => {
    expect(await tail("a\n\n", 1)).toMatchObject({ totalLines: 2, firstLine: 2, text: "\n" });
    expect(await tail("\n", 1)).toMatchObject({ totalLines: 1, firstLine: 1, text: "\n" });
  });

  it("handles an empty file and a tail of 0 lines", async () => {
    expect(await tail("", 3)).toMatchObject({ totalLines: 0, firstLine: 1, text: "" });
    const none = await tail("1\n2\n3", 0);
    expect(none).toMatchObject({ totalLines: 3, firstLine: 4, text: "" });
    expect(none.trailer).toMatchObject({ linesReturned: 0, eof: true, nextLine: 0, totalLines: 3 });
  });

  it("keeps CRLF endings", async () => {
    expect(await tail("a\r\nb\r\nc\r\n", 2)).toMatchObject({ text: "b\r\nc\r\n", firstLine: 2 });
  });

  it("skips the BOM of a one-line file", async () => {
    expect(await tail(Buffer.from([0xef, 0xbb, 0xbf, 0x68, 0x69]), 5)).toMatchObject({ text: "hi", totalLines: 1 });
  });

  it("reads UTF-16LE tails with and without a final newline", async () => {
    const bom = Buffer.from([0xff, 0xfe]);
    const withNl = Buffer.concat([bom, Buffer.from("ਊ\nĊ\n😀\n", "utf16le")]);
    expect(await tail(withNl, 2, "utf-16le")).toMatchObject({ text: "Ċ\n😀\n", firstLine: 2, totalLines: 3 });
    const without = Buffer.concat([bom, Buffer.from("ਊ\nĊ\n😀", "utf16le")]);
    expect(await tail(without, 1, "utf-16le")).toMatchObject({ text: "😀", firstLine: 3, totalLines: 3 });
    expect(await tail(without, 5, "utf-16le")).toMatchObject({ text: "ਊ\nĊ\n😀", firstLine: 1 });
  });

  it("finds lines across many backward blocks", async () => {
    const lines = Array.from({ length: 30_000 }, (_, i) => `line ${i + 1} ${"é".repeat(i % 7)}\n`);
    const content = lines.join("");
    const t = await tail(content, 20_000);
    expect(t.firstLine).toBe(10_001);
    expect(t.totalLines).toBe(30_000);
    expect(t.text).toBe(lines.slice(10_000).join(""));
    expect(t.chunks).toBeDefined();
  });

  it("applies max_bytes to a tail from its first line on", async () => {
    const t = await tail("1\n2\n3\n4\n5\n", 3, "utf-8", 4);
    expect(t.text).toBe("3\n4\n");
    expect(t.trailer).toMatchObject({ truncated: true, nextLine: 5, eof: false, linesReturned: 2 });
    expect(t.totalLines).toBe(5);
  });

  it("refuses a file that shrinks while it is read", async () => {
    const bytes = Buffer.from("1\n2\n3\n");
    const shrinking: ReadAt = async (position, length) => Buffer.from(bytes.subarray(position, position + length - 1));
    const err = await rejection(tailLines(shrinking, bytes.length, 1, "utf-8", 100));
    expect(err.reason).toBe("CONTENT_CHANGED");
  });
});

describe("windows agree with a simple reference", () => {
  // Random text with empty lines, CRLF, characters whose encodings contain 0x0A, and emoji.
  function randomText(seed: number, lineCount: number): string {
    let state = seed;
    const rand = (n: number) => {
      state = (state * 1103515245 + 12345) & 0x7fffffff;
      return state % n;
    };
    const alphabet = ["a", "b", " ", "é", "ਊ", "Ċ", "😀", "€"];
    const lines: string[] = [];
    for (let i = 0; i < lineCount; i++) {
      const length = rand(5) === 0 ? 0 : rand(40);
      lines.push(Array.from({ length }, () => alphabet[rand(alphabet.length)]).join("") + (rand(3) === 0 ? "\r\n" : "\n"));
    }
    const text = lines.join("");
    return rand(2) === 0 ? text : text.replace(/\r?\n$/, "");
  }

  for (const encoding of ["utf-8", "utf-16le"] as const) {
    it(`matches for ${encoding}`, async () => {
      for (let seed = 1; seed <= 12; seed++) {
        const text = randomText(seed, seed * 7);
        const lines = linesOf(text);
        const bytes = Buffer.from(text, encoding === "utf-8" ? "utf8" : "utf16le");
        for (const [startLine, lineCount] of [
          [1, undefined],
          [2, 3],
          [lines.length, 1],
          [lines.length + 1, undefined],
          [Math.ceil(lines.length / 2), undefined],
        ] as const) {
          const { text: got, trailer } = await read(bytes, { encoding, startLine, lineCount }, 1 + (seed % 5));
          const want = lines.slice(startLine - 1, lineCount === undefined ? undefined : startLine - 1 + lineCount);
          expect(got).toBe(want.join(""));
          expect(trailer.linesReturned).toBe(want.length);
          if (trailer.eof) expect(trailer.totalLines).toBe(lines.length);
        }
        for (const n of [1, 2, 5, lines.length + 3]) {
          const t = await tail(bytes, n, encoding);
          expect(t.text).toBe(lines.slice(Math.max(0, lines.length - n)).join(""));
          expect(t.totalLines).toBe(lines.length);
          expect(t.firstLine).toBe(Math.max(1, lines.length - n + 1));
        }
      }
    });
  }
});

describe("readLineWindowAt (a window from a line start a line index remembered)", () => {
  it("gives the same window as reading from the start of the file", async () => {
    const text = "\ufeffone\r\ntwo é\nthree 😀\nfour\nfive";
    const bytes = Buffer.from(text, "utf8");
    const lines = linesOf(text.slice(1));
    const offsets = [3];
    for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) offsets.push(i + 1);
    for (let from = 2; from <= lines.length; from++) {
      for (let startLine = from; startLine <= lines.length + 1; startLine++) {
        const at = await drain(
          readLineWindowAt(streamOf(bytes.subarray(offsets[from - 1]!), 3).source, from, { encoding: "utf-8", startLine, maxBytes: 1 << 20 }),
        );
        const whole = await read(bytes, { startLine });
        expect(at.text).toBe(whole.text);
        expect(at.trailer).toEqual(whole.trailer);
      }
    }
  });

  it("refuses a start_line before the source's first line", async () => {
    expect(() => readLineWindowAt(streamOf(Buffer.from("x\n")).source, 5, { encoding: "utf-8", startLine: 4, maxBytes: 10 })).toThrow(FileToolsError);
  });
});

describe("tailLines with a known line count", () => {
  it("skips the forward count and gives the same tail", async () => {
    const text = Array.from({ length: 50_000 }, (_, i) => `line ${i + 1}\n`).join("");
    const buf = Buffer.from(text);
    let bytesRead = 0;
    const counting: ReadAt = async (position, length) => {
      bytesRead += length;
      return Buffer.from(buf.subarray(position, position + length));
    };
    const known = await tailLines(counting, buf.length, 3, "utf-8", 1 << 20, undefined, 50_000);
    const withKnown = { ...known, ...(await drain(known.chunks)) };
    expect(bytesRead).toBeLessThan(TAIL_BYTES_BOUND);
    const plain = await tail(buf, 3);
    expect(withKnown).toMatchObject({ totalLines: 50_000, firstLine: 49_998, text: "line 49998\nline 49999\nline 50000\n" });
    expect(withKnown.trailer).toEqual(plain.trailer);
    const none = await tailLines(counting, buf.length, 0, "utf-8", 1 << 20, undefined, 50_000);
    expect(none.totalLines).toBe(50_000);
  });
});

/** A tail of a few short lines reads one backward block and the tail itself. */
const TAIL_BYTES_BOUND = 3 * 65536;

describe("tailLines of a large file (nothing before the tail is read)", () => {
  const lines = Array.from({ length: 50_000 }, (_, i) => `line ${i + 1} ${"é".repeat(i % 3)}\n`);
  const buf = Buffer.from(lines.join(""));
  const countLimit = 64 * 1024; // stands for TAIL_COUNT_LIMIT_BYTES: the file is far larger
  const tracked = () => {
    const reads: number[] = [];
    const readAt: ReadAt = async (position, length) => {
      reads.push(position);
      return Buffer.from(buf.subarray(position, position + length));
    };
    return { reads, readAt };
  };

  it("numbers the tail from the end and leaves total_lines unknown", async () => {
    const { reads, readAt } = tracked();
    const t = await tailLines(readAt, buf.length, 3, "utf-8", 1 << 20, undefined, undefined, countLimit);
    const out = await drain(t.chunks);
    expect(t.totalLines).toBeUndefined();
    expect(t.firstLine).toBe(-3);
    expect(out.text).toBe(lines.slice(-3).join(""));
    expect(out.chunks[0]!.firstLine).toBe(-3);
    expect(out.trailer).toEqual({ linesReturned: 3, bytesReturned: Buffer.byteLength(out.text), nextLine: 0, truncated: false, eof: true, lineCut: false });
    expect(Math.min(...reads.filter((p) => p > 0))).toBeGreaterThan(buf.length - TAIL_BYTES_BOUND);
  });

  it("still counts when the tail may be cut by max_bytes (paging needs a real next_line), or the count is known", async () => {
    const cut = await tailLines(tracked().readAt, buf.length, 3, "utf-8", 20, undefined, undefined, countLimit);
    expect({ ...cut, ...(await drain(cut.chunks)) }).toMatchObject({ totalLines: 50_000, firstLine: 49_998, trailer: { nextLine: 49_999, truncated: true } });
    const known = await tailLines(tracked().readAt, buf.length, 3, "utf-8", 1 << 20, undefined, 50_000, countLimit);
    expect(known).toMatchObject({ totalLines: 50_000, firstLine: 49_998 });
    const metadata = await tailLines(tracked().readAt, buf.length, 0, "utf-8", 1 << 20, undefined, undefined, countLimit);
    expect({ totalLines: metadata.totalLines, trailer: (await drain(metadata.chunks)).trailer }).toMatchObject({ totalLines: undefined, trailer: { eof: true, linesReturned: 0 } });
  });

  it("counts a file whose part before the tail is within the limit, as before", async () => {
    const t = await tailLines(tracked().readAt, buf.length, 3, "utf-8", 1 << 20, undefined, undefined, buf.length);
    expect(t).toMatchObject({ totalLines: 50_000, firstLine: 49_998 });
  });
});
