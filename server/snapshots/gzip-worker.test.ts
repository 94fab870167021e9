// The gzip worker's writes into a restore's staging directory (run here on
// the test's thread, as a worker runs it): only content checked against its
// SHA-256 is written, never past a failure of its batch, never through a
// link planted in the staging directory, and never once the staging
// directory is discarded (Staging.lend).
import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { Workspace } from "../workspace/workspace.js";
import type { Staging } from "../workspace/staging.js";
import run, { type ChunkToInflate, type Inflated } from "./gzip-worker.js";
import { compressMembers } from "./gzip-pool.js";

let base: string;
let root: string;
let outside: string;
let workspace: Workspace;
let staging: Staging;
beforeAll(async () => {
  base = realpathSync(mkdtempSync(path.join(tmpdir(), "gzip-worker-")));
  root = path.join(base, "root");
  outside = path.join(base, "outside");
  mkdirSync(root);
  mkdirSync(outside);
  workspace = await Workspace.open("w", root, false);
});
beforeEach(async () => {
  staging = await workspace.createStaging();
});
afterEach(async () => {
  await staging.discard();
});
afterAll(async () => {
  await workspace.close();
  rmSync(base, { recursive: true, force: true });
});

/** The staging directory's host path (inside the root, temp-named). */
function stagingPath(): string {
  return path.join(root, readdirSync(root)[0]!);
}

/** A file's mtime unless a test gives one (seconds). */
const MTIME = 1_600_000_000;

/** Files as a restore hands them to a worker: one range of gzip members, each a file's whole content. */
function task(files: Array<{ parts: string[]; content: string; mode?: number; mtime?: number; sha256?: string }>): { range: Uint8Array; chunks: ChunkToInflate[] } {
  const members = files.map((f) => gzipSync(f.content));
  const chunks: ChunkToInflate[] = [];
  let offset = 0;
  files.forEach((f, i) => {
    const bytes = Buffer.byteLength(f.content);
    chunks.push({ offset, length: members[i]!.length, bytes, hashed: bytes, sha256: f.sha256 ?? createHash("sha256").update(f.content).digest("hex"), file: { parts: f.parts, mode: f.mode ?? 0o644, mtime: f.mtime ?? MTIME } });
    offset += members[i]!.length;
  });
  return { range: Buffer.concat(members), chunks };
}

function written(files: Parameters<typeof task>[0]): Promise<Inflated[]> {
  return staging.lend(async (stagingFd) => run({ inflate: { ...task(files), stagingFd } }) as Inflated[]);
}

it("writes each checked file with its permission bits and mtime, making the directories on its way", async () => {
  expect(await written([{ parts: ["a.txt"], content: "alpha\n" }, { parts: ["new", "dir", "x.sh"], content: "#!/bin/sh\n", mode: 0o755, mtime: 1_500_000_000 }])).toEqual([{ staged: true }, { staged: true }]);
  expect(lstatSync(path.join(stagingPath(), "a.txt")).mtimeMs).toBe(MTIME * 1000);
  expect(lstatSync(path.join(stagingPath(), "new", "dir", "x.sh")).mtimeMs).toBe(1_500_000_000_000);
  expect(readFileSync(path.join(stagingPath(), "a.txt"), "utf8")).toBe("alpha\n");
  expect(readFileSync(path.join(stagingPath(), "new", "dir", "x.sh"), "utf8")).toBe("#!/bin/sh\n");
  expect(lstatSync(path.join(stagingPath(), "new", "dir", "x.sh")).mode & 0o777).toBe(0o755);
});

it("writes no content that is not its SHA-256, and nothing after it in its batch", async () => {
  const results = await written([
    { parts: ["bad.txt"], content: "not what the table says\n", sha256: "0".repeat(64) },
    { parts: ["good.txt"], content: "fine\n" },
  ]);
  expect(results).toEqual([{ problem: "mismatch" }]);
  expect(readdirSync(stagingPath())).toEqual([]);
});

it("stops a member that inflates past its size there, writing nothing", async () => {
  const { range, chunks } = task([{ parts: ["bomb"], content: "\0".repeat(1 << 20) }]);
  chunks[0] = { ...chunks[0]!, bytes: 10, hashed: 10 };
  expect(await staging.lend(async (stagingFd) => run({ inflate: { range, chunks, stagingFd } }))).toEqual([{ problem: "too-large" }]);
  expect(readdirSync(stagingPath())).toEqual([]);
});

it("refuses a name through a link planted in the staging directory, writing nothing outside", async () => {
  symlinkSync(outside, path.join(stagingPath(), "l"));
  const [result] = await written([{ parts: ["l", "x.txt"], content: "escaped?\n" }]);
  expect(result).toMatchObject({ unsafe: expect.stringContaining("goes through a symbolic link") });
  expect(readdirSync(outside)).toEqual([]);
});

it("refuses a file over a directory of the same name", async () => {
  mkdirSync(path.join(stagingPath(), "d"));
  const [result] = await written([{ parts: ["d"], content: "x\n" }]);
  expect(result).toMatchObject({ unsafe: expect.stringContaining("replaces a directory or link") });
});

it("a discard waits for a write lent to a worker: the write lands whole, then the staging directory goes", async () => {
  let start!: () => void;
  const started = new Promise<void>((resolve) => (start = resolve));
  const where = stagingPath();
  const lent = staging.lend(async (stagingFd) => {
    await started;
    return run({ inflate: { ...task([{ parts: ["late.txt"], content: "late\n" }]), stagingFd } });
  });
  const discarded = staging.discard();
  start();
  expect(await lent).toEqual([{ staged: true }]);
  await discarded;
  expect(existsSync(where)).toBe(false);
  expect(readdirSync(root)).toEqual([]);
});

it("ends every task, a failed one too, with a minor collection when the process exposes gc (bin/filetoolsd's --expose-gc)", () => {
  const calls: unknown[] = [];
  const host = globalThis as { gc?: (options: { type: "minor" }) => void };
  const exposed = host.gc;
  host.gc = (options) => void calls.push(options);
  try {
    expect(run({ compress: { raw: Buffer.from("a"), lengths: [1], level: 1 } })).toBeDefined();
    expect(() => run({ lstat: { stagingFd: -1, entries: [["x"]] } })).toThrow();
  } finally {
    host.gc = exposed;
  }
  expect(calls).toEqual([{ type: "minor" }, { type: "minor" }]);
});

it("compresses a batch through the pool: each buffer its own member, the members back to back, empty ones and a large one too", async () => {
  const raw = [Buffer.from("one"), Buffer.alloc(0), Buffer.alloc(3 << 20, 7), Buffer.from("x".repeat(5000)), Buffer.alloc(0)];
  const { bytes, members } = await compressMembers(raw, 6);
  expect(members.map((member) => gunzipSync(member))).toEqual(raw);
  expect(Buffer.concat(members).equals(bytes)).toBe(true);
  expect(gunzipSync(bytes).equals(Buffer.concat(raw))).toBe(true);
  // The inputs are copied, not moved: the caller's buffers stay its own.
  expect(raw[0]!.toString()).toBe("one");
  expect(raw[2]!.length).toBe(3 << 20);
  expect((await compressMembers([], 6)).members).toEqual([]);
});
