import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, readAll, setup } from "./daemon.js";

let d: Awaited<ReturnType<typeof setup>>;
const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`);
const ten = lines.join("");

beforeAll(async () => {
  d = await setup();
  const put = (p: string, b: string | Buffer) => {
    mkdirSync(path.dirname(path.join(d.root, p)), { recursive: true });
    writeFileSync(path.join(d.root, p), b);
  };
  put("ten.txt", ten);
  put("crlf.txt", "a\r\nb\r\nc");
  put("bad.txt", Buffer.from([0x61, 0xff, 0x62, 0x0a]));
  put("bin.dat", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0, 0, 1, 2, 3]));
  put("long.txt", "x".repeat(1000) + "\nshort\n");
  put("big.txt", Array.from({ length: 3000 }, (_, i) => `row ${i} ${"é".repeat(i % 37)}\n`).join(""));
});
afterAll(() => d?.stop());

const read = (p: string, extra: Record<string, unknown> = {}) => readAll(d.client, { workspace: d.ws, path: p, ...extra });

describe("Read", () => {
  it("reads a whole file: header, chunks, trailer at eof", async () => {
    const r = await read("ten.txt");
    expect(r.header.file.path).toBe("/ten.txt");
    expect(r.header.file.version).not.toBe("");
    expect(r.header.encoding).toBe("utf-8");
    expect(r.text).toBe(ten);
    expect(r.chunks[0]!.firstLine).toBe(1n);
    expect(r.trailer).toMatchObject({ linesReturned: 10n, nextLine: 0n, eof: true, truncated: false, totalLines: 10n });
    expect(r.trailer.bytesReturned).toBe(BigInt(Buffer.byteLength(ten)));
  });

  it("a window at the start", async () => {
    const r = await read("ten.txt", { startLine: 1n, lineCount: 3n });
    expect(r.text).toBe(lines.slice(0, 3).join(""));
    expect(r.trailer).toMatchObject({ linesReturned: 3n, nextLine: 4n, eof: false });
  });

  it("a window in the middle", async () => {
    const r = await read("ten.txt", { startLine: 4n, lineCount: 2n });
    expect(r.chunks[0]!.firstLine).toBe(4n);
    expect(r.text).toBe("line 4\nline 5\n");
    expect(r.trailer.nextLine).toBe(6n);
  });

  it("a window at the end reaches eof", async () => {
    const r = await read("ten.txt", { startLine: 9n, lineCount: 5n });
    expect(r.text).toBe("line 9\nline 10\n");
    expect(r.trailer).toMatchObject({ linesReturned: 2n, nextLine: 0n, eof: true });
  });

  it("a window past the end returns no lines and eof", async () => {
    const r = await read("ten.txt", { startLine: 50n });
    expect(r.text).toBe("");
    expect(r.trailer).toMatchObject({ linesReturned: 0n, eof: true, nextLine: 0n });
  });

  it("line_count 0 returns metadata only", async () => {
    const r = await read("ten.txt", { lineCount: 0n });
    expect(r.header.file.size).toBe(BigInt(ten.length));
    expect(r.chunks).toHaveLength(0);
    expect(r.trailer.linesReturned).toBe(0n);
  });

  it("tail_lines returns the last N lines with total_lines", async () => {
    const r = await read("ten.txt", { tailLines: 3n });
    expect(r.text).toBe("line 8\nline 9\nline 10\n");
    expect(r.chunks[0]!.firstLine).toBe(8n);
    expect(r.header.totalLines).toBe(10n);
    expect(r.trailer.eof).toBe(true);
  });

  it("max_bytes truncates at whole lines and next_line pages through the whole file exactly", async () => {
    const first = await read("ten.txt", { maxBytes: 15n });
    expect(first.text).toBe("line 1\nline 2\n");
    expect(first.trailer).toMatchObject({ truncated: true, nextLine: 3n, eof: false });

    const original = (await read("big.txt")).text;
    let next = 1n;
    let text = "";
    let pages = 0;
    while (next !== 0n) {
      const page = await read("big.txt", { startLine: next, maxBytes: 4096n });
      expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(4096);
      expect(page.chunks[0]?.firstLine ?? next).toBe(next);
      text += page.text;
      next = page.trailer.nextLine;
      pages++;
    }
    expect(pages).toBeGreaterThan(5);
    expect(text).toBe(original);
  });

  it("a single line longer than max_bytes is cut and flagged line_cut", async () => {
    const r = await read("long.txt", { maxBytes: 100n });
    expect(r.text).toBe("x".repeat(100));
    expect(r.trailer).toMatchObject({ lineCut: true, truncated: true, linesReturned: 1n });
    expect(r.trailer.nextLine).toBe(2n);
  });

  it("tail_lines on a file without a final newline and on CRLF", async () => {
    const r = await read("crlf.txt", { tailLines: 2n });
    expect(r.text).toBe("b\r\nc");
    expect(r.header.totalLines).toBe(3n);
  });

  it("a UTF-8 BOM is skipped", async () => {
    writeFileSync(path.join(d.root, "bom.txt"), "\uFEFFhi\n");
    expect((await read("bom.txt")).text).toBe("hi\n");
  });

  it("CRLF line endings are preserved", async () => {
    const r = await read("crlf.txt");
    expect(r.text).toBe("a\r\nb\r\nc");
    expect(r.trailer.linesReturned).toBe(3n);
  });

  it("invalid UTF-8 becomes U+FFFD", async () => {
    expect((await read("bad.txt")).text).toBe("a\uFFFDb\n");
  });

  it("a binary file is FAILED_PRECONDITION / BINARY_FILE", async () => {
    await expectError(read("bin.dat"), "FAILED_PRECONDITION", "BINARY_FILE");
  });

  it("an unknown encoding is INVALID_ARGUMENT", async () => {
    await expectError(read("ten.txt", { encoding: "ebcdic-42" }), "INVALID_ARGUMENT", "INVALID_ARGUMENT");
  });

  it("negative start_line or line_count is INVALID_ARGUMENT", async () => {
    await expectError(read("ten.txt", { startLine: -1n }), "INVALID_ARGUMENT", "INVALID_ARGUMENT");
    await expectError(read("ten.txt", { lineCount: -5n }), "INVALID_ARGUMENT", "INVALID_ARGUMENT");
  });

  it("start_line together with tail_lines is INVALID_ARGUMENT", async () => {
    await expectError(read("ten.txt", { startLine: 2n, tailLines: 2n }), "INVALID_ARGUMENT", "INVALID_ARGUMENT");
  });

  it("a missing file is NOT_FOUND; a directory is IS_A_DIRECTORY", async () => {
    await expectError(read("missing.txt"), "NOT_FOUND", "NOT_FOUND");
    await d.client.files.makeDir({ workspace: d.ws, path: "somedir" });
    await expectError(read("somedir"), "FAILED_PRECONDITION", "IS_A_DIRECTORY");
  });
});
