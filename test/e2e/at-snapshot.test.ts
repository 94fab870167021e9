// Reads at a snapshot (Read, Stat, List, Download with at_snapshot) through a
// real daemon and the TypeScript client, on a file:// store and on an s3://
// one (SeaweedFS): the answers of the tree as it was, after the live files
// changed or went; the same answers the live calls give once that snapshot is
// restored; only the chunks a read covers fetched (counted in the daemon's
// store metrics); a table of contents that lies, and a chunk that does not
// match, refused with DATA_LOSS (file:// only: the tampering helpers write
// its directory); an older-format snapshot with FAILED_PRECONDITION; links
// that leave the tree with PATH_ESCAPES_WORKSPACE.
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileType } from "../../clients/ts/src/index.js";
import type { WorkspaceClient } from "../../clients/ts/src/workspace.js";
import { FileStore } from "../../server/snapshots/file-store.js";
import { S3Store } from "../../server/snapshots/s3-store.js";
import type { Store as StoreObject } from "../../server/snapshots/store.js";
import { plantContents, storedContents, writeOldSnapshot } from "../support/old-format.js";
import { freePort } from "../support/ports.js";
import { startSeaweedfs, type Seaweedfs } from "../support/seaweedfs.js";
import { expectError, forbidHostPath, startDaemon, type Daemon } from "./daemon.js";

const LINE_BYTES = 64;
/** 13 MiB of numbered lines of LINE_BYTES each: chunks of 4 MiB, 4 MiB, 4 MiB and 1 MiB. */
const BIG_LINES = (13 << 20) / LINE_BYTES;
const CHUNK_LINES = (4 << 20) / LINE_BYTES;

function bigLine(n: number): string {
  const head = `line ${String(n).padStart(7, "0")} `;
  return head + "x".repeat(LINE_BYTES - head.length - 1) + "\n";
}

function bigFile(): Buffer {
  const parts: string[] = [];
  for (let n = 1; n <= BIG_LINES; n++) parts.push(bigLine(n));
  return Buffer.from(parts.join(""));
}

/** The tree a snapshot is taken of; returns the big file's bytes. */
function plantTree(root: string): Buffer {
  mkdirSync(path.join(root, "dir/sub"), { recursive: true });
  writeFileSync(path.join(root, "a.txt"), "one\ntwo\nthree\n");
  writeFileSync(path.join(root, "dir/b.txt"), "bee\n");
  writeFileSync(path.join(root, "dir/sub/c.txt"), "sea\n");
  writeFileSync(path.join(root, ".hidden"), "shh\n");
  writeFileSync(path.join(root, ".gitignore"), "*.log\n");
  writeFileSync(path.join(root, "run.log"), "ignored\n");
  writeFileSync(path.join(root, "bin.dat"), Buffer.from([0, 1, 2, 3, 0, 255]));
  symlinkSync("dir/b.txt", path.join(root, "to-b"));
  symlinkSync("dir", path.join(root, "to-dir"));
  const big = bigFile();
  writeFileSync(path.join(root, "big.txt"), big);
  return big;
}

interface Store {
  name: string;
  args(): string[];
  /** The store the daemon uses, opened by the test (to plant an older-format snapshot). */
  open(d: Daemon): StoreObject;
  /** The file:// store's directory (tampering tests), or undefined. */
  dir?(d: Daemon): string;
}

let s3: Seaweedfs | undefined;
const s3Prefix = `at-${process.pid}-${Date.now()}`;
const stores: Store[] = [
  { name: "file://", args: () => [], open: (d) => new FileStore(path.join(d.dataDir, "snapshots")), dir: (d) => path.join(d.dataDir, "snapshots") },
  {
    name: "s3://",
    args: () => {
      Object.assign(process.env, { AWS_ACCESS_KEY_ID: s3!.accessKey, AWS_SECRET_ACCESS_KEY: s3!.secretKey });
      return ["--store", `s3://${s3!.bucket}/${s3Prefix}`, "--s3-endpoint", s3!.endpoint, "--s3-force-path-style"];
    },
    open: () => new S3Store(`s3://${s3!.bucket}/${s3Prefix}`, s3!.storeOptions),
  },
];

beforeAll(async () => {
  s3 = await startSeaweedfs();
}, 120_000);

afterAll(async () => {
  await s3?.stop();
});

describe.each(stores)("reads at a snapshot on $name", (store) => {
  let d: Daemon;
  let ws: WorkspaceClient;
  let metrics: string;
  let snap: string;
  let big: Buffer;
  const scratch = mkdtempSync(path.join(tmpdir(), "at-snapshot-"));

  /** get_range operations the daemon's store has made so far. */
  async function ranges(): Promise<number> {
    const text = await (await fetch(metrics)).text();
    const line = text.split("\n").find((l) => l.startsWith("filetools_store_operations_total{") && l.includes('operation="get_range"') && l.includes('outcome="ok"'));
    return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
  }

  beforeAll(async () => {
    const port = await freePort();
    metrics = `http://127.0.0.1:${port}/metrics`;
    d = await startDaemon({ args: ["--metrics-listen", `127.0.0.1:${port}`, ...store.args()] });
    forbidHostPath(d.dataDir);
    ws = d.client.workspace("w");
    const run = await ws.startRun();
    big = plantTree(d.hostDir("w"));
    snap = (await ws.finishRun(run.id)).snapshot!.id;
    // Live, after the snapshot: a.txt changes, dir/b.txt goes.
    await ws.writeText("/a.txt", "changed\n");
    await ws.delete("/dir/b.txt");
  }, 120_000);

  afterAll(async () => {
    await d?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("reads a file as it was, after it changed and after it was deleted live", async () => {
    const then = await ws.readText("/a.txt", { atSnapshot: snap });
    expect(then.text).toBe("one\ntwo\nthree\n");
    expect(then.version).toMatch(/^snapshot:[0-9a-f]{16}$/);
    expect((await ws.readText("/a.txt")).text).toBe("changed\n");
    expect((await ws.readText("/dir/b.txt", { atSnapshot: snap })).text).toBe("bee\n");
    await expectError(ws.readText("/dir/b.txt"), "NOT_FOUND");
    // Through links inside the snapshot, as live.
    expect((await ws.readText("/to-b", { atSnapshot: snap })).text).toBe("bee\n");
    expect((await ws.readText("/to-dir/sub/c.txt", { atSnapshot: snap })).text).toBe("sea\n");
  });

  it("serves line windows and tails as a live Read does", async () => {
    const window = await ws.readText("/a.txt", { atSnapshot: snap, startLine: 2, lineCount: 1 });
    expect(window).toMatchObject({ text: "two\n", firstLine: 2, lastLine: 2, eof: false, nextStartLine: 3 });
    const tail = await ws.readText("/a.txt", { atSnapshot: snap, tail: 2 });
    expect(tail).toMatchObject({ text: "two\nthree\n", firstLine: 2, eof: true });
    const capped = await ws.readText("/a.txt", { atSnapshot: snap, maxBytes: 5 });
    expect(capped).toMatchObject({ text: "one\n", truncated: true, nextStartLine: 2 });
    await expectError(ws.readText("/bin.dat", { atSnapshot: snap }), "FAILED_PRECONDITION", "BINARY_FILE");
    await expectError(ws.readText("/dir", { atSnapshot: snap }), "FAILED_PRECONDITION", "IS_A_DIRECTORY");
  });

  it("stats entries as they were", async () => {
    const a = await ws.stat("/a.txt", { atSnapshot: snap, countLines: true, detectBinary: true });
    expect(a).toMatchObject({ path: "/a.txt", type: FileType.FILE, size: 14n, lineCount: 3n, isBinary: false });
    expect((await ws.stat("/bin.dat", { atSnapshot: snap, detectBinary: true })).isBinary).toBe(true);
    expect((await ws.stat("/to-b", { atSnapshot: snap })).type).toBe(FileType.SYMLINK);
    expect((await ws.stat("/dir", { atSnapshot: snap })).type).toBe(FileType.DIRECTORY);
    expect((await ws.stat("/", { atSnapshot: snap })).type).toBe(FileType.DIRECTORY);
    await expectError(ws.stat("/nope", { atSnapshot: snap }), "NOT_FOUND", "NOT_FOUND");
    await expectError(ws.stat("/a.txt/x", { atSnapshot: snap }), "FAILED_PRECONDITION", "NOT_A_DIRECTORY");
  });

  it("lists with recursion, depth, globs, hidden names, .gitignore and paging", async () => {
    const paths = async (options: Parameters<WorkspaceClient["list"]>[1], at = "/") => (await ws.list(at, { atSnapshot: snap, ...options })).entries.map((e) => e.path);
    expect(await paths({})).toEqual(["/.gitignore", "/.hidden", "/a.txt", "/big.txt", "/bin.dat", "/dir", "/to-b", "/to-dir"]);
    expect(await paths({ respectGitignore: false, includeHidden: false })).toEqual(["/a.txt", "/big.txt", "/bin.dat", "/dir", "/run.log", "/to-b", "/to-dir"]);
    expect(await paths({ recursive: true, pattern: "**/*.txt" })).toEqual(["/a.txt", "/big.txt", "/dir/b.txt", "/dir/sub/c.txt"]);
    expect(await paths({ recursive: true, maxDepth: 1 }, "/dir")).toEqual(["/dir/b.txt", "/dir/sub"]);
    expect(await paths({ recursive: true }, "/to-dir")).toEqual(["/to-dir/b.txt", "/to-dir/sub", "/to-dir/sub/c.txt"]);
    const page = await ws.list("/", { atSnapshot: snap, maxEntries: 2 });
    expect(page.truncated).toBe(true);
    expect(page.entries).toHaveLength(2);
    await expectError(ws.list("/a.txt", { atSnapshot: snap }), "FAILED_PRECONDITION", "NOT_A_DIRECTORY");
  });

  it("downloads a file as it was, checked by its sha256", async () => {
    const to = path.join(scratch, `big-${store.name.replace(/\W/g, "")}`);
    const header = await ws.download("/big.txt", to, { atSnapshot: snap });
    expect(header.sha256).toBe(createHash("sha256").update(big).digest("hex"));
    expect(readFileSync(to).equals(big)).toBe(true);
    const gone = path.join(scratch, `b-${store.name.replace(/\W/g, "")}`);
    await ws.download("/dir/b.txt", gone, { atSnapshot: snap });
    expect(readFileSync(gone, "utf8")).toBe("bee\n");
  });

  it("fetches only the chunk a read covers", async () => {
    await ws.stat("/a.txt", { atSnapshot: snap }); // the table of contents, read once
    let before = await ranges();
    expect((await ws.readText("/.hidden", { atSnapshot: snap })).text).toBe("shh\n");
    expect((await ranges()) - before).toBe(1);
    // Read again: its first bytes are kept.
    before = await ranges();
    expect((await ws.readText("/.hidden", { atSnapshot: snap })).text).toBe("shh\n");
    expect((await ranges()) - before).toBe(0);
    // The line index learns the big file's lines once; then a window in its third chunk reads that chunk alone.
    expect((await ws.stat("/big.txt", { atSnapshot: snap, countLines: true })).lineCount).toBe(BigInt(BIG_LINES));
    const line = 2 * CHUNK_LINES + 4000;
    before = await ranges();
    const window = await ws.readText("/big.txt", { atSnapshot: snap, startLine: line, lineCount: 3 });
    expect(window.text).toBe(bigLine(line) + bigLine(line + 1) + bigLine(line + 2));
    expect((await ranges()) - before).toBe(1);
    // The last lines: the last chunk alone.
    before = await ranges();
    expect((await ws.readText("/big.txt", { atSnapshot: snap, tail: 1 })).text).toBe(bigLine(BIG_LINES));
    expect((await ranges()) - before).toBe(1);
  });

  it("keeps paths inside the snapshot", async () => {
    // Links a restore would refuse, packed all the same (links are stored as they are): never followed out.
    const l = d.client.workspace("links");
    const run = await l.startRun();
    symlinkSync("../../outside", path.join(d.hostDir("links"), "out"));
    symlinkSync("/etc", path.join(d.hostDir("links"), "abs"));
    const id = (await l.finishRun(run.id)).snapshot!.id;
    await expectError(l.readText("/out/x", { atSnapshot: id }), "PERMISSION_DENIED", "PATH_ESCAPES_WORKSPACE");
    await expectError(l.readText("/abs/passwd", { atSnapshot: id }), "PERMISSION_DENIED", "PATH_ESCAPES_WORKSPACE");
    await expectError(l.list("/abs", { atSnapshot: id }), "PERMISSION_DENIED", "PATH_ESCAPES_WORKSPACE");
    expect((await l.stat("/out", { atSnapshot: id })).type).toBe(FileType.SYMLINK);
    await expectError(ws.stat("../x", { atSnapshot: snap }), "PERMISSION_DENIED", "PATH_ESCAPES_WORKSPACE");
    await expectError(ws.readText("/a\u0000b", { atSnapshot: snap }), "INVALID_ARGUMENT", "INVALID_PATH");
  });

  it("refuses a write given a version read at a snapshot", async () => {
    const { version } = await ws.stat("/a.txt", { atSnapshot: snap });
    await expectError(ws.writeText("/a.txt", "x\n", { ifVersion: version }), "FAILED_PRECONDITION", "CONTENT_CHANGED");
    expect((await ws.readText("/a.txt")).text).toBe("changed\n");
  });

  it("answers NOT_FOUND for a snapshot the workspace does not have", async () => {
    await expectError(ws.readText("/a.txt", { atSnapshot: "20200101T000000000Z-00000000" }), "NOT_FOUND");
    await expectError(ws.list("/", { atSnapshot: "nonsense" }), "NOT_FOUND");
  });

  it("gives the answers the live calls give on the restored tree", async () => {
    // But for times (a restore gives its files new ones; a snapshot tells those it was taken with) and directory sizes (0 at a snapshot).
    const listing = async (atSnapshot?: string) =>
      (await ws.list("/", { recursive: true, respectGitignore: false, atSnapshot })).entries.map((e) => ({ path: e.path, type: e.type, size: e.type === FileType.DIRECTORY ? 0n : e.size, mode: e.mode }));
    const then = await listing(snap);
    const statThen = await ws.stat("/big.txt", { atSnapshot: snap, countLines: true });
    const windowThen = await ws.readText("/big.txt", { atSnapshot: snap, startLine: 1000, lineCount: 5 });
    await ws.restoreSnapshot(snap);
    expect(await listing()).toEqual(then);
    const statNow = await ws.stat("/big.txt", { countLines: true });
    expect({ ...statNow, version: "", mtime: undefined }).toEqual({ ...statThen, version: "", mtime: undefined });
    const windowNow = await ws.readText("/big.txt", { startLine: 1000, lineCount: 5 });
    expect({ ...windowNow, version: "", file: undefined }).toEqual({ ...windowThen, version: "", file: undefined });
    // Taken as it was when the snapshot was written, in whole seconds.
    expect(statThen.mtime!.nanos).toBe(0);
  });

  it.runIf(store.dir !== undefined)("refuses a table of contents that lies, and a chunk that does not match, with DATA_LOSS", async () => {
    const dir = store.dir!(d);
    const h = d.client.workspace("hostile");
    const take = async (): Promise<string> => {
      const run = await h.startRun();
      await h.writeText("/f.txt", "content\n");
      await h.writeText("/g.txt", "other\n");
      return (await h.finishRun(run.id)).snapshot!.id;
    };
    const climbs = await take();
    const toc = storedContents(dir, "hostile", climbs);
    toc.files.paths[0] = "/../escape";
    plantContents(dir, "hostile", climbs, toc);
    const refused = await expectError(h.readText("/g.txt", { atSnapshot: climbs }), "DATA_LOSS", "DATA_LOSS");
    expect(refused.message).toMatch(/invalid path/);
    await expectError(h.list("/", { atSnapshot: climbs }), "DATA_LOSS", "DATA_LOSS");

    const past = await take();
    const pastToc = storedContents(dir, "hostile", past);
    pastToc.chunks.offset[0] = pastToc.tarballs[0]!.bytes + 10;
    plantContents(dir, "hostile", past, pastToc);
    await expectError(h.stat("/f.txt", { atSnapshot: past }), "DATA_LOSS", "DATA_LOSS");

    const wrong = await take();
    const wrongToc = storedContents(dir, "hostile", wrong);
    // The first file's SHA-256, which is its one chunk's too.
    const digests = Buffer.from(wrongToc.files.sha256, "base64");
    digests[0]! ^= 0xff;
    wrongToc.files.sha256 = digests.toString("base64");
    plantContents(dir, "hostile", wrong, wrongToc);
    await expectError(h.readText("/f.txt", { atSnapshot: wrong }), "DATA_LOSS", "DATA_LOSS");
    await expectError(h.download("/f.txt", path.join(scratch, "f"), { atSnapshot: wrong }), "DATA_LOSS", "DATA_LOSS");
    expect((await h.readText("/g.txt", { atSnapshot: wrong })).text).toBe("other\n");
  });

  it("answers FAILED_PRECONDITION for a snapshot in the older format", async () => {
    const o = d.client.workspace("older");
    await d.client.createWorkspace("older");
    const tree = path.join(scratch, `older-${store.name.replace(/\W/g, "")}`);
    mkdirSync(tree);
    writeFileSync(path.join(tree, "f.txt"), "old\n");
    const id = await writeOldSnapshot(store.open(d), "older", tree);
    const error = await expectError(o.readText("/f.txt", { atSnapshot: id }), "FAILED_PRECONDITION", "SNAPSHOT_WITHOUT_CONTENTS");
    expect(error.message).toMatch(/older format.*restore it/);
    await expectError(o.list("/", { atSnapshot: id }), "FAILED_PRECONDITION", "SNAPSHOT_WITHOUT_CONTENTS");
  });
});
