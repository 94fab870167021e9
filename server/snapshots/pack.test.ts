// The packer reads each file whole and checks the one-link rule at open and
// after the read before any byte of its member goes out (issue 25, items 5
// and 6): a file that is or becomes a hard link is left out, with a warning,
// of the tarball and its file list, and never ends the process. A file that
// grows or shrinks while it is read still makes a valid member. A tarball
// killed mid-way gives back every descriptor it held.
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { appendFileSync, linkSync, mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import tar from "tar-stream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Workspace } from "../workspace/workspace.js";
import { OpenedFile } from "../workspace/opened-file.js";
import type { HashedEntry } from "../workspace/hash-tree.js";
import { descriptorsUnder, eventually, watchProcess } from "../../test/support/process-health.js";
import { recordsOf } from "./file-list.js";
import { packSeekable, type SeekableOptions } from "./seekable.js";
import { Spool } from "./spool.js";

const SECRET = "SECRET-MARKER-7f3a";
const BIG = 3 * 1024 * 1024 + 5; // past the one-read size: spooled

let base: string;
let root: string;
let outside: string;
let scratch: string;
let workspace: Workspace;
let health: ReturnType<typeof watchProcess>;

beforeEach(async () => {
  base = mkdtempSync(path.join(tmpdir(), "pack-test-"));
  root = path.join(base, "root");
  outside = path.join(base, "outside");
  scratch = path.join(base, "scratch");
  for (const dir of [root, outside, scratch]) mkdirSync(dir);
  writeFileSync(path.join(outside, "secret.txt"), `${SECRET}\n`);
  writeFileSync(path.join(root, "a.txt"), "first\n");
  writeFileSync(path.join(root, "z.txt"), "last\n");
  workspace = await Workspace.open("w", root, false);
  health = watchProcess();
});

afterEach(() => {
  vi.restoreAllMocks();
  health.stop();
  workspace.close();
  rmSync(base, { recursive: true, force: true });
});

interface Packed {
  /** Members by name, with their content. */
  members: Map<string, Buffer>;
  files: HashedEntry[];
  fileCount: number;
  warnings: Record<string, unknown>[];
  tar: Buffer;
}

async function pack(options: Partial<SeekableOptions> = {}): Promise<Packed> {
  const warnings: Record<string, unknown>[] = [];
  const logger = { warn: (fields: object, msg: string) => void warnings.push({ ...fields, msg }) } as unknown as Partial<SeekableOptions>["logger"];
  const packed = packSeekable(workspace, { key: "w/t.tar.gz", level: 6, scratchDir: scratch, logger, ...options });
  const chunks: Buffer[] = [];
  for await (const chunk of packed.bytes) chunks.push(Buffer.from(chunk));
  const plain = gunzipSync(Buffer.concat(chunks));
  const members = new Map<string, Buffer>();
  const extract = tar.extract();
  const read = (async () => {
    for await (const entry of extract) {
      const parts: Buffer[] = [];
      for await (const part of entry) parts.push(part as Buffer);
      members.set(entry.header.name, Buffer.concat(parts));
    }
  })();
  extract.end(plain);
  await read;
  return { members, files: [...recordsOf(packed.fileList())], fileCount: packed.fileCount, warnings, tar: plain };
}

const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** Runs `before` (once) when the packer starts reading the file of `size` bytes. */
function onRead(size: number, before: () => void): void {
  const readAll = OpenedFile.prototype.readAll;
  vi.spyOn(OpenedFile.prototype, "readAll").mockImplementation(function (this: OpenedFile, take) {
    if (this.size === size) before();
    return readAll.call(this, take);
  });
}

describe("files that are or become hard links", () => {
  it("a hard link to an outside file is left out, with a warning; the rest is packed", async () => {
    linkSync(path.join(outside, "secret.txt"), path.join(root, "linked.txt"));
    const packed = await pack();
    expect([...packed.members.keys()].sort()).toEqual(["a.txt", "z.txt"]);
    expect(packed.files.map((f) => f.path)).toEqual(["/a.txt", "/z.txt"]);
    expect(packed.tar.includes(SECRET)).toBe(false);
    expect(packed.warnings).toEqual([expect.objectContaining({ workspace: "w", path: "/linked.txt", reason: "hard-linked" })]);
    expect(health.problems).toEqual([]);
  });

  it.each([
    ["read whole", 4321],
    ["spooled", BIG],
  ])("a file linked from outside after it was opened (%s) is left out, with a warning, and the pack goes on", async (_, size) => {
    writeFileSync(path.join(root, "m.bin"), Buffer.alloc(size, 0x61));
    onRead(size, () => linkSync(path.join(root, "m.bin"), path.join(outside, "alias")));
    const packed = await pack();
    expect([...packed.members.keys()].sort()).toEqual(["a.txt", "z.txt"]);
    expect(packed.files.map((f) => f.path)).toEqual(["/a.txt", "/z.txt"]);
    expect(packed.fileCount).toBe(2);
    expect(packed.warnings).toEqual([expect.objectContaining({ path: "/m.bin", reason: "hard-linked" })]);
    expect(health.problems).toEqual([]);
  });

  it("a large file linked from outside in the middle of its read: none of its bytes go out", async () => {
    writeFileSync(path.join(root, "m.bin"), Buffer.alloc(BIG, 0x62));
    const append = Spool.prototype.append;
    let chunks = 0;
    vi.spyOn(Spool.prototype, "append").mockImplementation(function (this: Spool, chunk) {
      if (++chunks === 2) linkSync(path.join(root, "m.bin"), path.join(outside, "alias"));
      return append.call(this, chunk);
    });
    const packed = await pack();
    expect(chunks).toBe(2); // stopped at the chunk after which the rule no longer held
    expect(packed.members.has("m.bin")).toBe(false);
    expect(packed.tar.includes(Buffer.alloc(4096, 0x62))).toBe(false);
    expect(packed.warnings).toEqual([expect.objectContaining({ path: "/m.bin" })]);
  });
});

describe("a file that changes while it is read", () => {
  it.each([
    ["read whole", 5000],
    ["spooled", BIG],
  ])("(%s) grown: cut at its size at open; shrunk: stored at the size read; the tar is valid and the file list agrees", async (_, size) => {
    writeFileSync(path.join(root, "grows.bin"), Buffer.alloc(size, 0x67));
    writeFileSync(path.join(root, "shrinks.bin"), Buffer.alloc(size + 1, 0x73));
    const readAll = OpenedFile.prototype.readAll;
    vi.spyOn(OpenedFile.prototype, "readAll").mockImplementation(function (this: OpenedFile, take) {
      if (this.size === size) appendFileSync(path.join(root, "grows.bin"), "more bytes");
      if (this.size === size + 1) truncateSync(path.join(root, "shrinks.bin"), 1000);
      return readAll.call(this, take);
    });
    const packed = await pack();
    expect(packed.members.get("grows.bin")?.equals(Buffer.alloc(size, 0x67))).toBe(true); // (toEqual walks a Buffer byte by byte: seconds for 3 MiB)
    expect(packed.members.get("shrinks.bin")?.equals(Buffer.alloc(1000, 0x73))).toBe(true);
    const listed = Object.fromEntries(packed.files.map((f) => [f.path, f]));
    expect(listed["/grows.bin"]).toMatchObject({ size, sha256: sha(Buffer.alloc(size, 0x67)) });
    expect(listed["/shrinks.bin"]).toMatchObject({ size: 1000, sha256: sha(Buffer.alloc(1000, 0x73)) });
    writeFileSync(path.join(base, "t.tar"), packed.tar);
    expect(execFileSync("tar", ["-tf", path.join(base, "t.tar")], { encoding: "utf8" }).split("\n").filter(Boolean).sort()).toEqual(["a.txt", "grows.bin", "shrinks.bin", "z.txt"]);
  });
});

describe("a tarball killed mid-way", () => {
  beforeEach(() => {
    // Members open when the tarball is killed: a large file's (streamed from the spool) or small files'.
    for (const name of ["b1.bin", "b2.bin", "b3.bin"]) writeFileSync(path.join(root, name), Buffer.alloc(BIG, name.charCodeAt(1)));
    mkdirSync(path.join(root, "small"));
    for (let i = 0; i < 300; i++) writeFileSync(path.join(root, "small", `f${i}.txt`), `file ${i}\n`.repeat(50));
  });

  const kills: [string, (bytes: AsyncIterator<Uint8Array>, abort: AbortController) => Promise<void>][] = [
    ["the consumer stops reading", async (bytes) => void (await bytes.return?.())],
    ["the call is cancelled", async (_, abort) => abort.abort()],
    [
      "reading a spooled file back fails half-way",
      async () => {
        vi.spyOn(Spool.prototype, "chunks").mockImplementation(async function* () {
          yield Buffer.alloc(1024 * 1024);
          throw Object.assign(new Error("EIO: i/o error, read"), { code: "EIO" });
        });
      },
    ],
  ];
  it("a tarball never read opens nothing", async () => {
    const held = descriptorsUnder(root, scratch);
    packSeekable(workspace, { key: "w/t.tar.gz", level: 6, scratchDir: scratch });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(descriptorsUnder(root, scratch)).toEqual(held);
  });

  it.each(kills)("%s: nothing thrown at the process, every descriptor given back", async (_, kill) => {
    const held = descriptorsUnder(root, scratch); // the workspace's root
    const abort = new AbortController();
    const packed = packSeekable(workspace, { key: "w/t.tar.gz", level: 6, scratchDir: scratch, signal: abort.signal });
    const bytes = packed.bytes[Symbol.asyncIterator]();
    expect((await bytes.next()).done).toBe(false);
    expect(descriptorsUnder(root, scratch).length).toBeGreaterThan(held.length); // the walk's, the spool
    await kill(bytes, abort);
    await bytes.next().catch(() => undefined); // an error or the end, as the kill goes
    await eventually(() => descriptorsUnder(root, scratch).length === held.length);
    expect(descriptorsUnder(root, scratch)).toEqual(held);
    expect(health.problems).toEqual([]);
  });
});
