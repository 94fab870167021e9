// readFile on small files (shorter than the binary-check head, so read whole
// at once and answered by wholeTextWindow where it can): the file as it is
// when read, even when it grew or shrank after it was opened, and the same
// windows as the generic path for anything else asked of it.
import { appendFileSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BINARY_HEAD_BYTES } from "../text/binary.js";
import { readLineWindow, type LineTrailer } from "../text/lines.js";
import { Workspace } from "../workspace/workspace.js";
import { readFile, type ReadOptions } from "./read.js";

let root: string;
let workspace: Workspace;

beforeEach(async () => {
  root = mkdtempSync(path.join(tmpdir(), "read-test-"));
  workspace = await Workspace.open("test", root, false);
});

afterEach(async () => {
  await workspace.close();
  rmSync(root, { recursive: true, force: true });
});

/** The header's size, the chunks' text joined and their first lines, and the trailer. */
async function read(on: Workspace, file: string, options: Omit<ReadOptions, "encoding"> = {}) {
  const window = readFile(on, file, { encoding: "", utf8Chunks: true, ...options }, 1 << 20, new AbortController().signal);
  let size: bigint | undefined;
  const firstLines: number[] = [];
  let text = "";
  for (;;) {
    const next = await window.next();
    if (next.done) return { size, text, firstLines, trailer: next.value };
    const part = next.value;
    if ("entry" in part) size = part.entry.size;
    else {
      firstLines.push(part.firstLine);
      text += part.utf8 ? part.utf8.toString("utf8") : part.text;
    }
  }
}

/** The generic line window over the same bytes (what the file's window must be). */
async function expectedWindow(bytes: Buffer, startLine = 1, lineCount?: number, maxBytes = 1 << 20): Promise<{ text: string; trailer: LineTrailer }> {
  async function* once() {
    yield bytes;
  }
  const window = readLineWindow(once(), { encoding: "utf-8", startLine, lineCount, maxBytes, utf8: true });
  let text = "";
  for (;;) {
    const next = await window.next();
    if (next.done) return { text, trailer: next.value };
    text += next.value.utf8!.toString("utf8");
  }
}

/** A workspace whose openFile runs `meanwhile` after the file is opened (and stat'ed), before anything is read. */
function changingAfterOpen(meanwhile: () => void): Workspace {
  return new Proxy(workspace, {
    get(target, key, receiver) {
      if (key !== "openFile") return Reflect.get(target, key, receiver);
      return async (...args: Parameters<Workspace["openFile"]>) => {
        const file = await target.openFile(...args);
        meanwhile();
        return file;
      };
    },
  });
}

describe("readFile on a small file", () => {
  const cases: Record<string, Buffer> = {
    "LF lines": Buffer.from("one\ntwo\nthree\n"),
    "no trailing newline": Buffer.from("one\ntwo\nthree"),
    CRLF: Buffer.from("one\r\ntwo\r\n\r\nthree\r\n"),
    "non-UTF-8 bytes": Buffer.from([0x6f, 0x6b, 0x0a, 0xe9, 0x74, 0xe9, 0x0a, 0x78]),
    "a UTF-8 BOM": Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("bom\nfile\n")]),
    empty: Buffer.alloc(0),
    "one byte under the head": Buffer.from("z".repeat(63) + "\n").subarray(0, BINARY_HEAD_BYTES - 1),
    "exactly the head": Buffer.alloc(BINARY_HEAD_BYTES, "ab\n"),
    "one byte over the head": Buffer.alloc(BINARY_HEAD_BYTES + 1, "ab\n"),
  };
  const windows: Array<[string, { startLine?: bigint; lineCount?: bigint; maxBytes?: bigint }]> = [
    ["whole", {}],
    ["line_count 2", { lineCount: 2n }],
    ["start_line 2", { startLine: 2n }],
    ["start_line 2, line_count 1", { startLine: 2n, lineCount: 1n }],
    ["max_bytes 6", { maxBytes: 6n }],
  ];
  for (const [name, bytes] of Object.entries(cases)) {
    for (const [windowName, options] of windows) {
      it(`${name}, ${windowName}: the window of the file's bytes`, async () => {
        writeFileSync(path.join(root, "f.txt"), bytes);
        const got = await read(workspace, "f.txt", options);
        const bom = bytes.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])) ? 3 : 0;
        const want = await expectedWindow(bytes.subarray(bom), Number(options.startLine ?? 1), options.lineCount === undefined ? undefined : Number(options.lineCount), Number(options.maxBytes ?? 1 << 20));
        expect(got.size).toBe(BigInt(bytes.length));
        expect(got.text).toBe(want.text);
        expect(got.trailer).toEqual(want.trailer);
        if (got.text !== "") expect(got.firstLines[0]).toBe(Number(options.startLine ?? 1));
      });
    }
  }

  it("tail_lines on a small file: the last lines, numbered", async () => {
    writeFileSync(path.join(root, "f.txt"), "a\nb\nc\nd");
    const got = await read(workspace, "f.txt", { tailLines: 2n });
    expect(got).toMatchObject({ text: "c\nd", firstLines: [3], trailer: { linesReturned: 2, eof: true, nextLine: 0 } });
  });

  it("a file that grew after it was opened: read as it is then", async () => {
    const file = path.join(root, "grows.txt");
    writeFileSync(file, "first\n");
    const got = await read(changingAfterOpen(() => appendFileSync(file, "second\nthird")), "grows.txt");
    expect(got.size).toBe(6n); // the header describes the file as opened
    expect(got.text).toBe("first\nsecond\nthird");
    expect(got.trailer).toEqual((await expectedWindow(Buffer.from("first\nsecond\nthird"))).trailer);
  });

  it("a file that grew past the head after it was opened: the generic window, whole", async () => {
    const file = path.join(root, "grows.txt");
    writeFileSync(file, "first\n");
    const more = "x".repeat(99) + "\n";
    const got = await read(changingAfterOpen(() => appendFileSync(file, more.repeat(100))), "grows.txt");
    expect(got.text).toBe("first\n" + more.repeat(100));
    expect(got.trailer).toMatchObject({ linesReturned: 101, eof: true });
  });

  it("a file that shrank after it was opened: read as it is then", async () => {
    const file = path.join(root, "shrinks.txt");
    writeFileSync(file, "first\nsecond\nthird\n");
    const got = await read(changingAfterOpen(() => truncateSync(file, 9)), "shrinks.txt");
    expect(got.size).toBe(19n);
    expect(got.text).toBe("first\nsec");
    expect(got.trailer).toEqual({ linesReturned: 2, bytesReturned: 9, nextLine: 0, truncated: false, eof: true, lineCut: false, totalLines: 2 });
  });
});
