// Windows with the `utf8` option (chunks as UTF-8 bytes, valid UTF-8 passed
// through undecoded) against the same windows as strings: the same lines under
// the same numbers, chunks within their size, the same trailers. (Chunk
// boundaries may differ: a block to decode is taken smaller.)
import { describe, expect, it } from "vitest";
import type { TextEncoding } from "./encoding.js";
import { READ_CHUNK_BYTES, readLineWindow, type LineChunk, type LineWindow, type LineWindowOptions } from "./lines.js";

/** `bytes` in slices of `size` into one reused buffer, as the line index's pooled reads are. */
async function* reusedSlices(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  const buffer = Buffer.alloc(size);
  for (let pos = 0; pos < bytes.length; pos += size) {
    const n = bytes.copy(buffer, 0, pos, pos + size);
    yield buffer.subarray(0, n);
    buffer.fill(0x2a); // what a later read would leave there
  }
}

/** The window's lines by number (the pieces of a line cut across chunks joined), and its trailer. */
async function drain(window: LineWindow, chunkBytes: number) {
  const lines = new Map<number, string>();
  for (;;) {
    const next = await window.next();
    if (next.done) return { lines: [...lines], trailer: next.value };
    const { firstLine, text, utf8 } = next.value;
    const chunk = utf8 ? utf8.toString("utf8") : text;
    expect(Buffer.byteLength(chunk)).toBeLessThanOrEqual(chunkBytes);
    let number = firstLine;
    for (const line of chunk.split(/(?<=\n)/)) {
      lines.set(number, (lines.get(number) ?? "") + line);
      if (line.endsWith("\n")) number++;
    }
  }
}

/** Lines of mixed content: ASCII, multi-byte characters, invalid bytes, empty lines, CRLF, one long line. */
function sample(seed: number): Buffer {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) >>> 0) >>> 8;
  const parts: Buffer[] = [];
  for (let i = 0; i < 3000; i++) {
    const kind = next() % 10;
    if (kind === 0) parts.push(Buffer.from("\n"));
    else if (kind === 1) parts.push(Buffer.from(`naïve 日本語 😀 ${i}\r\n`));
    else if (kind === 2) parts.push(Buffer.from([0x61, 0xff, 0xc3, 0x0a])); // invalid: a lone 0xFF and a cut sequence
    else if (kind === 3 && i % 500 === 3) parts.push(Buffer.from(`${"long é ".repeat(4000)}\n`));
    else parts.push(Buffer.from(`line ${i} ${"x".repeat(next() % 120)}\n`));
  }
  parts.push(Buffer.from("no newline at the end é"));
  return Buffer.concat(parts);
}

describe("readLineWindow with utf8 chunks", () => {
  const cases: Array<{ name: string; options: Partial<LineWindowOptions>; slice: number }> = [
    { name: "whole file, default chunks", options: {}, slice: 64 * 1024 },
    { name: "small source buffers", options: {}, slice: 1000 },
    { name: "small chunks", options: { chunkBytes: 300 }, slice: 4096 },
    { name: "a window in the middle", options: { startLine: 1234, lineCount: 700 }, slice: 8192 },
    { name: "max_bytes", options: { maxBytes: 50_000 }, slice: 16 * 1024 },
    { name: "max_bytes smaller than the first line", options: { startLine: 4, maxBytes: 5 }, slice: 16 * 1024 },
  ];
  for (const { name, options, slice } of cases) {
    it(`gives the same chunks and trailer as strings: ${name}`, async () => {
      const bytes = sample(slice);
      const base = { encoding: "utf-8" as TextEncoding, maxBytes: 10 * 1024 * 1024, ...options };
      const chunkBytes = options.chunkBytes ?? READ_CHUNK_BYTES;
      const asStrings = await drain(readLineWindow(reusedSlices(bytes, slice), base), chunkBytes);
      const asUtf8 = await drain(readLineWindow(reusedSlices(bytes, slice), { ...base, utf8: true }), chunkBytes);
      expect(asUtf8).toEqual(asStrings);
      expect(asStrings.lines.length).toBeGreaterThan(0);
    });
  }

  it("sends other encodings as UTF-8 of the decoded text", async () => {
    const bytes = Buffer.from("caf\xe9\nna\xefve\n", "latin1");
    const window = readLineWindow(reusedSlices(bytes, 4), { encoding: "latin1", maxBytes: 1000, utf8: true });
    const first = await window.next();
    expect(first.value).toMatchObject({ firstLine: 1, text: "" });
    expect((first.value as LineChunk).utf8?.toString("utf8")).toBe("café\nnaïve\n");
    expect((await window.next()).done).toBe(true);
  });
});
