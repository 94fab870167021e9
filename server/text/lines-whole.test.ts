// wholeTextWindow (the small whole-file answer) against readLineWindow on the
// same bytes and options: the same chunks, byte for byte, and the same
// trailer wherever it answers; and it declines whatever it does not cover.
import { describe, expect, it } from "vitest";
import type { TextEncoding } from "./encoding.js";
import { READ_CHUNK_BYTES, readLineWindow, wholeTextWindow, type LineChunk, type LineWindowOptions } from "./lines.js";

async function* once(bytes: Buffer): AsyncGenerator<Buffer> {
  yield bytes;
}

/** The generic window's chunks (UTF-8 bytes copied out) and trailer. */
async function generic(bytes: Buffer, options: LineWindowOptions) {
  const window = readLineWindow(once(bytes), options);
  const chunks: LineChunk[] = [];
  for (;;) {
    const next = await window.next();
    if (next.done) return { chunks, trailer: next.value };
    const { firstLine, text, utf8 } = next.value;
    chunks.push(utf8 ? { firstLine, text, utf8: Buffer.from(utf8) } : { firstLine, text });
  }
}

const texts: Record<string, Buffer> = {
  empty: Buffer.alloc(0),
  "one line feed": Buffer.from("\n"),
  "no trailing newline": Buffer.from("alpha\nbeta\ngamma"),
  "trailing newline": Buffer.from("alpha\nbeta\ngamma\n"),
  CRLF: Buffer.from("alpha\r\nbeta\r\n\r\ngamma\r\n"),
  "CRLF, no trailing newline": Buffer.from("alpha\r\nbeta\r"),
  "empty lines": Buffer.from("\n\n\nx\n\n"),
  "multi-byte UTF-8": Buffer.from("zürich ✓\n日本語\n😀 end"),
  "1 KB": Buffer.from(Array.from({ length: 40 }, (_, i) => `line ${String(i + 1).padStart(2, "0")}: ${"x".repeat(15)}`).join("\n").slice(0, 1023) + "\n"),
  "just under the 8 KiB head": Buffer.from("y".repeat(99) + "\n").subarray(0, 8191),
};

const optionSets: Array<[string, Omit<LineWindowOptions, "encoding">]> = [
  ["whole file", { maxBytes: 1 << 20 }],
  ["whole file as strings", { maxBytes: 1 << 20, utf8: false }],
  ["whole file as UTF-8", { maxBytes: 1 << 20, utf8: true }],
  ["line_count 1", { maxBytes: 1 << 20, lineCount: 1, utf8: true }],
  ["line_count 3", { maxBytes: 1 << 20, lineCount: 3, utf8: true }],
  ["line_count 1,000", { maxBytes: 1 << 20, lineCount: 1000, utf8: true }],
  ["line_count 0", { maxBytes: 1 << 20, lineCount: 0, utf8: true }],
  ["start_line 2", { maxBytes: 1 << 20, startLine: 2, utf8: true }],
  ["max_bytes 5", { maxBytes: 5, utf8: true }],
  ["max_bytes 1,024", { maxBytes: 1024, utf8: true }],
  ["max_bytes 1,023", { maxBytes: 1023, utf8: true }],
  ["chunks of 4 bytes", { maxBytes: 1 << 20, chunkBytes: 4, utf8: true }],
];

describe("wholeTextWindow", () => {
  for (const [textName, bytes] of Object.entries(texts)) {
    for (const [optionsName, rest] of optionSets) {
      it(`answers as readLineWindow does: ${textName}, ${optionsName}`, async () => {
        const options: LineWindowOptions = { encoding: "utf-8", ...rest };
        const answer = wholeTextWindow(bytes, options);
        const expected = await generic(bytes, options);
        if (answer === undefined) {
          // Declined only where the window is not simply the whole text.
          const isWhole = expected.trailer.eof && expected.chunks.length <= 1 && expected.trailer.bytesReturned === bytes.length;
          expect(isWhole && (options.startLine ?? 1) === 1 && options.lineCount !== 0 && (options.chunkBytes ?? READ_CHUNK_BYTES) >= bytes.length).toBe(false);
          return;
        }
        expect(answer.chunk === undefined ? [] : [answer.chunk]).toEqual(expected.chunks);
        expect(answer.trailer).toEqual(expected.trailer);
      });
    }
  }

  it("answers the common cases itself", () => {
    for (const name of ["empty", "no trailing newline", "CRLF", "multi-byte UTF-8", "1 KB", "just under the 8 KiB head"]) {
      expect(wholeTextWindow(texts[name]!, { encoding: "utf-8", maxBytes: 1 << 20, utf8: true }), name).toBeDefined();
    }
  });

  it("declines text that is not plain valid UTF-8: a BOM, invalid bytes, other encodings", async () => {
    const cases: Array<[Buffer, TextEncoding]> = [
      [Buffer.from("\ufeffwith a BOM\n"), "utf-8"],
      [Buffer.from([0x61, 0xff, 0x0a, 0x62]), "utf-8"],
      [Buffer.from("caf\xe9\n", "latin1"), "latin1"],
      [Buffer.from("ascii\n"), "ascii"],
      [Buffer.from("utf-16\n", "utf16le"), "utf-16le"],
    ];
    for (const [bytes, encoding] of cases) {
      const options = { encoding, maxBytes: 1 << 20, utf8: true };
      expect(wholeTextWindow(bytes, options)).toBeUndefined();
      // The generic window handles them (here: skips the BOM, replaces the invalid byte).
      expect((await generic(bytes, options)).trailer.eof).toBe(true);
    }
  });
});
