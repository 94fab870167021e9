// The seekable format end to end, on real files and a file:// store: what
// GNU tar makes of every tarball (a snapshot's own, an assembled export),
// what an incremental snapshot stores and reads, and the tables of contents a
// tampered store may hold, each refused with DATA_LOSS, changing nothing.
// Restores give every entry its recorded mtime, to the second.
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ageTree, mtimes, tree } from "../../test/support/trees.js";
import { plantContents, storedContents, writeOldSnapshot, type StoredContents } from "../../test/support/old-format.js";
import { listStaged, listTree } from "../workspace/fingerprint.js";
import { WorkspaceRegistry } from "../workspace/registry.js";
import { FileStore } from "./file-store.js";
import { chunksByFile, type Contents } from "./contents.js";
import { parseTable } from "./contents-delta.js";
import { DEFAULT_LIMITS, extractTree } from "./extract.js";
import { listStagedMembers, membersOf, stageTreeFiles } from "./seekable-read.js";
import { MAX_CONTENTS_CHAIN } from "./manifest.js";
import { Snapshots, type Manifest } from "./snapshots.js";

let base: string;
let storeDir: string;
let root: string;
let registry: WorkspaceRegistry;
let snapshots: Snapshots;
/** The store's ranged reads so far, and the bytes they asked for. */
let rangedReads = 0;
let rangedBytes = 0;

beforeAll(async () => {
  base = mkdtempSync(path.join(tmpdir(), "seekable-"));
  storeDir = path.join(base, "store");
  registry = await WorkspaceRegistry.start(path.join(base, "data"), new Map());
  await registry.create("w");
  root = path.join(base, "data", "workspaces", "w");
  const files = new FileStore(storeDir);
  await files.check();
  const store = Object.assign(Object.create(files) as FileStore, {
    getRange: (key: string, offset: number, length: number) => {
      rangedReads++;
      rangedBytes += length;
      return files.getRange(key, offset, length);
    },
  });
  snapshots = new Snapshots(store, 100, path.join(base, "tmp"), registry, { statCacheDir: path.join(base, "data", "stat-cache") });
  await snapshots.prepare();
  // Every kind of member: nested and empty directories, a long name, a link, an empty file, one of several chunks, an executable.
  mkdirSync(path.join(root, "src", "deep"), { recursive: true });
  mkdirSync(path.join(root, "empty"));
  writeFileSync(path.join(root, "src", "a.txt"), "alpha\n");
  writeFileSync(path.join(root, "src", "deep", `${"long-name-".repeat(12)}.txt`), "long\n");
  writeFileSync(path.join(root, "empty.txt"), "");
  writeFileSync(path.join(root, "big.bin"), randomBytes(9 * 1024 * 1024 + 123));
  writeFileSync(path.join(root, "copy-of-a.txt"), "alpha\n");
  symlinkSync("src/a.txt", path.join(root, "link"));
  writeFileSync(path.join(root, "script.sh"), "#!/bin/sh\n", { mode: 0o755 });
  ageTree(root);
});

afterAll(() => {
  void registry?.close();
  rmSync(base, { recursive: true, force: true });
});

let parent = "";
async function snapshot(): Promise<Manifest> {
  const written = await snapshots.create(await registry.get("w"), { runId: "", labels: {}, changeSet: [], parent, publish: { replaces: parent } });
  expect(written.published).toBe(true);
  parent = written.manifest.id;
  return written.manifest;
}

/** Rewrites a stored delta table (and its manifest's size and sha256 of it). */
function plantTable(manifest: Manifest, lie: (table: { order: { files: number[] }; base: { sha256: string } }) => void): void {
  const file = path.join(storeDir, manifest.contents!.key);
  const table = JSON.parse(gunzipSync(readFileSync(file)).toString("utf8"));
  lie(table);
  const bytes = gzipSync(JSON.stringify(table));
  writeFileSync(file, bytes);
  const manifestFile = path.join(storeDir, "w", `${manifest.id}.json`);
  const stored = JSON.parse(readFileSync(manifestFile, "utf8"));
  stored.contents = { ...stored.contents, bytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
  writeFileSync(manifestFile, JSON.stringify(stored));
}

/** What GNU tar extracts from `tarball`, as a tree of names and contents. */
function extracted(tarball: Buffer): Record<string, string> {
  const dir = mkdtempSync(path.join(base, "gnu-"));
  execFileSync("tar", ["-xzf", "-", "-C", dir], { input: tarball });
  return tree(dir);
}

async function exported(manifest: Manifest): Promise<Buffer> {
  const stream = await snapshots.exportStored(manifest);
  const parts: Buffer[] = [];
  for await (const chunk of stream.chunks) parts.push(chunk);
  await stream.release();
  const bytes = Buffer.concat(parts);
  expect(createHash("sha256").update(bytes).digest("hex")).toBe(stream.sha256);
  return bytes;
}

const stored = (manifest: Manifest): Buffer => readFileSync(path.join(storeDir, manifest.tarball));

describe("the seekable format", () => {
  let first: Manifest;
  let second: Manifest;
  let secondTree: Record<string, string>;
  let secondMtimes: Record<string, number>;

  it("a first snapshot is one tarball GNU tar extracts into the tree, byte for byte; each file's content starts a gzip member", async () => {
    first = await snapshot();
    expect(first.tarballs).toEqual([first.tarball]);
    expect(extracted(stored(first))).toEqual(tree(root));
    expect(statSync(path.join(storeDir, first.tarball)).size).toBe(first.sizeBytes);
    // big.bin is three chunks; every file has its own member (the copy of a.txt too: the tarball is the whole tree).
    const contents = storedContents(storeDir, "w", first.id);
    const big = contents.files.paths.findIndex((p) => p.endsWith("big.bin"));
    expect(contents.chunks.first[big + 1]! - contents.chunks.first[big]!).toBe(3);
    const offsets = new Set(contents.chunks.offset);
    expect(offsets.size).toBe(contents.chunks.offset.length);
    for (const offset of offsets) expect(stored(first).subarray(offset, offset + 2)).toEqual(Buffer.from([0x1f, 0x8b]));
  });

  it("the next snapshot stores only what changed, reads only files whose stat changed, and exports the whole tree", async () => {
    writeFileSync(path.join(root, "src", "a.txt"), "alpha, changed\n");
    writeFileSync(path.join(root, "new.txt"), "new\n");
    second = await snapshot();
    secondTree = tree(root);
    secondMtimes = mtimes(root);
    expect(second.tarballs).toEqual([second.tarball, first.tarball]);
    expect(second.sizeBytes).toBeLessThan(2048);
    expect(second.fileCount).toBe(first.fileCount + 1);
    // Its own tarball holds the changed and new files only.
    expect(Object.keys(extracted(stored(second))).filter((name) => !name.endsWith("/") && !name.includes("->"))).toEqual(expect.arrayContaining(["new.txt", "src/a.txt"]));
    expect(extracted(await exported(second))).toEqual(tree(root));
  });

  it("a file rewritten behind the daemon's back with its size and mtime put back is still seen (ctime moved)", async () => {
    const file = path.join(root, "src", "deep", `${"long-name-".repeat(12)}.txt`);
    const { atime, mtime } = statSync(file);
    writeFileSync(file, "LONG\n");
    utimesSync(file, atime, mtime);
    const third = await snapshot();
    expect(extracted(await exported(third))).toEqual(tree(root));
  });

  it("a restore from a chain of snapshots reads their chunks by ranges and gives the tree back", async () => {
    writeFileSync(path.join(root, "src", "a.txt"), "live edit\n");
    const before = rangedReads;
    const restored = await snapshots.restore("w", second);
    expect(rangedReads - before).toBeGreaterThan(0);
    expect(tree(root)).toEqual(secondTree);
    expect(mtimes(root)).toEqual(secondMtimes);
    // The stat cache vouches for every restored file: the next snapshot reads none of them.
    await snapshots.flushStatCaches();
    const cache = JSON.parse(readFileSync(path.join(base, "data", "stat-cache", "w.json"), "utf8"));
    expect(cache.paths.length).toBe(second.fileCount);
    // Both taken of the staging tree before the swap (listStaged): what a walk of the restored tree gives.
    const walked = await listTree(await registry.get("w"));
    expect(restored.fingerprint).toBe(walked.fingerprint);
    const versions = new Map(walked.listing.map((entry) => [entry.path, entry.version]));
    expect(cache.versions).toEqual(cache.paths.map((p: string) => versions.get(p)));
  });

  it("a restored file rewritten behind the daemon's back at once, its size and restored mtime kept, is still seen (its ctime is not the restore's)", async () => {
    const file = path.join(root, "copy-of-a.txt");
    const { atime, mtime } = statSync(file);
    writeFileSync(file, "ALPHA\n");
    utimesSync(file, atime, mtime);
    const next = await snapshot();
    expect(extracted(await exported(next))).toEqual(tree(root));
  });
});

describe("a restore's listing of its staged tree, from its members (no walk)", () => {
  /** The members of a snapshot of a tree with every kind of entry, staged; with a walk's listing of the staged tree. */
  const staged = async (id: string) => {
    await registry.create(id);
    const at = path.join(base, "data", "workspaces", id);
    mkdirSync(path.join(at, "a", "b", "c"), { recursive: true });
    mkdirSync(path.join(at, "a", "empty"));
    mkdirSync(path.join(at, "private"), { mode: 0o700 });
    writeFileSync(path.join(at, "private", "secret.txt"), "s\n", { mode: 0o600 });
    writeFileSync(path.join(at, "a", "b", "c", "deep.txt"), "deep\n");
    writeFileSync(path.join(at, "a", "empty.txt"), "");
    writeFileSync(path.join(at, "big.bin"), randomBytes(4 * 1024 * 1024 + 5));
    writeFileSync(path.join(at, "run.sh"), "#!/bin/sh\n", { mode: 0o755 });
    symlinkSync("a/b/c/deep.txt", path.join(at, "link"));
    ageTree(at);
    // A name that is not UTF-8 (held, and shown escaped; ageTree takes names as text).
    writeFileSync(Buffer.concat([Buffer.from(`${at}/caf`), Buffer.of(0xe9), Buffer.from(".txt")]), "latin1\n");
    const { manifest } = await snapshots.create(await registry.get(id), { runId: "", labels: {}, changeSet: [], parent: "", publish: { replaces: "" } });
    const members = membersOf((await parseTable(id, manifest.id, readFileSync(path.join(storeDir, manifest.contents!.key)))) as Contents, manifest.id);
    const staging = await registry.createStaging(id);
    await extractTree(members, staging, { limits: DEFAULT_LIMITS, damaged: "DATA_LOSS" }, (files) => stageTreeFiles(new FileStore(storeDir), files, staging));
    const walked = (await listStaged(await registry.get(id), staging)).listing;
    return { members, staging, walked };
  };

  it("is what a walk of the staged tree lists, entry by entry", async () => {
    const { members, staging, walked } = await staged("listed");
    try {
      expect(members.find((m) => m.header.name === "big.bin")?.chunks.length).toBe(2);
      expect(walked.map((entry) => entry.path)).toEqual(expect.arrayContaining(["/caf\\xe9.txt", "/a/empty", "/private/secret.txt", "/link"]));
      expect(await listStagedMembers(staging, members)).toEqual(walked);
    } finally {
      await staging.discard();
    }
  });

  it("is left to the walk when the members do not name the whole tree (a directory made on a file's way) or an entry is gone", async () => {
    const { members, staging } = await staged("unlisted");
    try {
      expect(await listStagedMembers(staging, members.filter((m) => m.header.name !== "a/b"))).toBeUndefined();
      rmSync(Buffer.concat([Buffer.from(staging.procPath()), Buffer.from("/run.sh")]));
      expect(await listStagedMembers(staging, members)).toBeUndefined();
    } finally {
      await staging.discard();
    }
  });
});

describe("tables of contents told against the parent's (deltas)", () => {
  /** Another daemon's view of the same store: nothing cached. */
  const fresh = (): Snapshots => new Snapshots(new FileStore(storeDir), 100, path.join(base, "tmp-fresh"), registry, {});
  const entries = (c: Contents) => ({ files: c.files, mtimes: c.mtimes, directories: c.directories, chunks: chunksByFile(c) });

  it("a run's snapshot stores only the entries that changed, and another daemon reads the whole table back from a chain of them", async () => {
    const whole = await snapshot();
    writeFileSync(path.join(root, "src", "a.txt"), "alpha, a delta\n");
    writeFileSync(path.join(root, "big.bin"), randomBytes(9 * 1024 * 1024 + 7)); // a file of several chunks among the added
    const delta = await snapshot();
    expect(delta.contents!.bases).toEqual([{ key: whole.contents!.key, bytes: whole.contents!.bytes, sha256: whole.contents!.sha256 }, ...(whole.contents!.bases ?? [])]);
    expect(storedContents(storeDir, "w", delta.id).files.paths).toEqual(["/big.bin", "src/a.txt"]); // front-coded: "/" shared
    expect(delta.contents!.bytes).toBeLessThan(1024);
    expect(entries(await fresh().readContents(delta))).toEqual(entries(await snapshots.readContents(delta)));
    // Deltas on deltas: an entry added, then removed, another changed.
    writeFileSync(path.join(root, "chain-1.txt"), "one\n");
    const added = await snapshot();
    rmSync(path.join(root, "chain-1.txt"));
    writeFileSync(path.join(root, "src", "a.txt"), "alpha, a third\n");
    const top = await snapshot();
    expect(top.contents!.bases!.length).toBe(delta.contents!.bases!.length + 2);
    expect(entries(await fresh().readContents(top))).toEqual(entries(await snapshots.readContents(top)));
    expect(entries(await fresh().readContents(added))).toEqual(entries(await snapshots.readContents(added)));
  });

  const lies: Array<[string, (manifest: Manifest) => void]> = [
    ["its base table missing from the store", (m) => rmSync(path.join(storeDir, m.contents!.bases![0]!.key))],
    ["its base table rewritten", (m) => writeFileSync(path.join(storeDir, m.contents!.bases![0]!.key), gzipSync("{}"))],
    ["an order that points past the base's entries", (m) => plantTable(m, (t) => void (t.order.files = [0, 1_000_000]))],
    ["added entries its order does not place", (m) => plantTable(m, (t) => void (t.order.files = t.order.files.filter((_: number, i: number, a: number[]) => a[i - (i % 2)] !== -1)))],
    ["a base its manifest does not list", (m) => plantTable(m, (t) => void (t.base.sha256 = "0".repeat(64)))],
  ];
  it.each(lies)("%s: DATA_LOSS, and the workspace is left as it was", async (_name, lie) => {
    await snapshot(); // a base this test's lie leaves alone (the last test's may be one it wrote whole)
    writeFileSync(path.join(root, "src", "a.txt"), `alpha, ${_name}\n`);
    const manifest = await snapshot();
    expect(manifest.contents!.bases).toBeDefined();
    lie(manifest);
    const planted = await fresh().find("w", manifest.id);
    writeFileSync(path.join(root, "marker.txt"), "live\n");
    const before = tree(root);
    const reader = fresh();
    await expect(reader.restore("w", planted)).rejects.toMatchObject({ reason: "DATA_LOSS" });
    await expect(reader.exportFiltered({ manifest: planted }, ["**"]).then((s) => s.release())).rejects.toMatchObject({ reason: "DATA_LOSS" });
    expect(tree(root)).toEqual(before);
    rmSync(path.join(root, "marker.txt"));
  });

  it(`a chain of deltas is bounded: past ${MAX_CONTENTS_CHAIN} tables, the next one is written whole`, async () => {
    let manifest = await snapshot();
    while (manifest.contents!.bases !== undefined) {
      expect(manifest.contents!.bases.length).toBeLessThanOrEqual(MAX_CONTENTS_CHAIN);
      manifest = await snapshot();
    }
    expect(storedContents(storeDir, "w", manifest.id).files.paths.length).toBe(manifest.fileCount);
  });
});

describe("a restore into a copy the last snapshot read", () => {
  it("fetches only the files that differ, removes what the snapshot does not hold, and gives its tree back", async () => {
    // Past the racy window of what the last tests wrote (files changed within 50 ms of a snapshot are read again next time).
    const settle = () => new Promise((resolve) => setTimeout(resolve, 120));
    rmSync(path.join(root, "link")); // a tree with links is restored whole
    chmodSync(path.join(root, "src"), 0o700); // a private directory stays private
    ageTree(root, 1_600_000_000);
    await settle();
    const before = await snapshot();
    const beforeTree = tree(root);
    const beforeMtimes = mtimes(root);
    // Kept as they are but for their mtimes: given the snapshot's, not fetched.
    utimesSync(path.join(root, "copy-of-a.txt"), 1_400_000_000, 1_400_000_000);
    utimesSync(path.join(root, "empty"), 1_400_000_000, 1_400_000_000);
    writeFileSync(path.join(root, "src", "a.txt"), "changed after\n");
    chmodSync(path.join(root, "src"), 0o755);
    rmSync(path.join(root, "empty.txt"));
    writeFileSync(path.join(root, "src", "deep", "extra.txt"), "removed from a directory the restore keeps\n");
    writeFileSync(path.join(root, "src", "deep", `${"long-name-".repeat(12)}.txt`), "changed in a directory the restore keeps\n");
    mkdirSync(path.join(root, "added", "deeper"), { recursive: true });
    writeFileSync(path.join(root, "added", "deeper", "z.txt"), "z\n");
    await settle();
    await snapshot(); // the copy's stat cache is now this one's
    const [reads, bytes] = [rangedReads, rangedBytes];
    const restored = await snapshots.restore("w", before);
    expect(tree(root)).toEqual(beforeTree);
    // What the merge added to or removed from (src, src/deep) and what it kept with another mtime, at the snapshot's.
    expect(mtimes(root)).toEqual(beforeMtimes);
    // The tree's fingerprint, told from what the merge touched rather than walked again, is a walk's.
    expect(restored.fingerprint).toBe((await listTree(await registry.get("w"))).fingerprint);
    expect(statSync(path.join(root, "src")).mode & 0o777).toBe(0o700);
    // a.txt, staged in src (whose mode differs), and the long-named file, staged loose (and empty.txt, which has no chunk); not big.bin's 9 MiB, nor any unchanged file.
    expect(rangedReads - reads).toBe(2);
    expect(rangedBytes - bytes).toBeLessThan(1024);
  });

  it("reads the files whose stat the cache cannot vouch for and keeps those that hold the snapshot's content: only the others are fetched", async () => {
    const settle = () => new Promise((resolve) => setTimeout(resolve, 120));
    rmSync(path.join(root, "link"), { force: true }); // a tree with links is restored whole
    writeFileSync(path.join(root, "copy-of-a.txt"), "alpha\n");
    await settle();
    const before = await snapshot();
    const beforeTree = tree(root);
    // Both with a new inode (as a restore's placing gives them): one with the content it had, one with other bytes of the same size.
    const replace = (rel: string, content: string, mode: number) => {
      writeFileSync(path.join(root, `${rel}.new`), content, { mode });
      renameSync(path.join(root, `${rel}.new`), path.join(root, rel));
    };
    replace("script.sh", "#!/bin/sh\n", 0o755);
    replace("copy-of-a.txt", "omega\n", 0o644);
    await settle();
    const [reads, bytes] = [rangedReads, rangedBytes];
    const restored = await snapshots.restore("w", before);
    expect(tree(root)).toEqual(beforeTree);
    expect(restored.fingerprint).toBe((await listTree(await registry.get("w"))).fingerprint);
    // copy-of-a.txt's chunk alone: script.sh was read here and kept.
    expect(rangedReads - reads).toBe(1);
    expect(rangedBytes - bytes).toBeLessThan(512);
  });

  it("plans again from the tree when a call changed it after the walk the restore was to plan from", async () => {
    const settle = () => new Promise((resolve) => setTimeout(resolve, 120));
    await settle();
    const before = await snapshot();
    const beforeTree = tree(root);
    writeFileSync(path.join(root, "src", "a.txt"), "changed again\n");
    await settle();
    await snapshot();
    const workspace = await registry.get("w");
    const listed = await listTree(workspace);
    // Between the walk and the restore's lock: a file the walk did not see, and one the plan would keep as it was.
    const text = (value: string) => new TextEncoder().encode(value);
    await workspace.writeFile(["stray.txt"], text("written after the walk\n"), { createDirs: false, mode: "create-only" });
    await workspace.writeFile(["copy-of-a.txt"], text("rewritten after the walk\n"), { createDirs: false, mode: "replace-only" });
    const restored = await snapshots.restore("w", before, { listed });
    expect(tree(root)).toEqual(beforeTree);
    expect(restored.fingerprint).toBe((await listTree(await registry.get("w"))).fingerprint);
  });
});

/** The index of `wanted` in a stored file list (front-coded: each path after the characters it shares with the one before). */
function indexOfPath(c: StoredContents, wanted: string): number {
  const { shared } = c.files as StoredContents["files"] & { shared: number[] };
  let full = "";
  return c.files.paths.findIndex((suffix, i) => (full = full.slice(0, shared[i]) + suffix) === wanted);
}

/** A file list's SHA-256s (base64, 32 bytes each) with the `index`th zeroed. */
function withDigestZeroed(digests: string, index: number): string {
  expect(index).toBeGreaterThanOrEqual(0);
  const bytes = Buffer.from(digests, "base64");
  bytes.fill(0, index * 32, index * 32 + 32);
  return bytes.toString("base64");
}

describe("a table of contents that lies is refused with DATA_LOSS, and the workspace is left as it was", () => {
  // Each lie, and what the live tree lacks so that the restore reads what lies (an in-place restore keeps what it has).
  const lies: Array<[string, (c: StoredContents) => void, string?]> = [
    ["a chunk past the end of its tarball", (c) => void (c.chunks.offset[0] = c.tarballs[0]!.bytes)],
    ["a length that overflows", (c) => void (c.chunks.length[0] = Number.MAX_SAFE_INTEGER)],
    ["two chunks that overlap", (c) => void (c.chunks.offset[1] = c.chunks.offset[0]! + 1)],
    ["chunks that do not add up to the file's size", (c) => void (c.files.sizes[0] = c.files.sizes[0]! + 1)],
    ["another workspace's tarball", (c) => void (c.tarballs[0]!.key = c.tarballs[0]!.key.replace(/^w\//, "other/"))],
    // A file of one chunk: the file list's SHA-256 is the chunk's.
    ["a chunk whose content is not its SHA-256", (c) => void (c.files.sha256 = Buffer.alloc(Buffer.from(c.files.sha256, "base64").length).toString("base64"))],
    ["a chunk of a large file whose content is not its SHA-256", (c) => void (c.chunks.sha256 = Buffer.alloc(Buffer.from(c.chunks.sha256, "base64").length).toString("base64")), "big.bin"],
    // Each chunk right, the whole another file's: a restore's stat cache would vouch for the lie.
    ["a large file whose chunks are right and whose file list gives another SHA-256", (c) => void (c.files.sha256 = withDigestZeroed(c.files.sha256, indexOfPath(c, "/big.bin"))), "big.bin"],
    // Within the size the table gives its tarball: refused before a read of that length is even asked for.
    ["a chunk longer than its content could compress to", (c) => void ((c.tarballs[0]!.bytes = 16 * 1024 ** 3), (c.chunks.length[0] = 8 * 1024 ** 3))],
    // Its chunks' overlap checked per entry, each entry another size: a tarball is listed once.
    ["a tarball listed twice", (c) => void (c.tarballs.push({ ...c.tarballs[0]! }), (c.chunks.tarball[1] = 1))],
    ["a path that climbs out", (c) => void (c.files.paths[0] = "/../../escape.txt")],
    ["a path with an empty component", (c) => void (c.files.paths[0] = "/src//a.txt")],
    ["a path with a '.' component", (c) => void (c.files.paths[0] = "/src/./a.txt")],
    ["a path ending in '/'", (c) => void (c.files.paths[0] = "/src/")],
    ["a name with a NUL", (c) => void (c.files.paths[0] = "/a\0.txt")],
    // A restore writes files in parallel (gzip-worker.ts): two files of one name, or one below another, would race.
    ["a path named twice", (c) => void (c.files.paths[2] = c.files.paths[1]!)],
    ["a path below a file", (c) => void (c.files.paths[2] = `${c.files.paths[1]}/below.txt`)],
  ];
  it.each(lies)("%s", async (_name, lie, missing) => {
    // What a lie before took away (the restore it failed left the tree as it was, without it).
    if (missing && !existsSync(path.join(root, missing))) writeFileSync(path.join(root, missing), randomBytes(9 * 1024 * 1024 + 123));
    // Written whole (no parent), so that every lie is in an entry of the stored table.
    const { manifest } = await snapshots.create(await registry.get("w"), { runId: "", labels: {}, changeSet: [], parent: "" });
    const contents = storedContents(storeDir, "w", manifest.id);
    lie(contents);
    plantContents(storeDir, "w", manifest.id, contents);
    const planted = await snapshots.find("w", manifest.id);
    writeFileSync(path.join(root, "marker.txt"), "live\n");
    if (missing) rmSync(path.join(root, missing));
    const before = tree(root);
    await expect(snapshots.restore("w", planted)).rejects.toMatchObject({ reason: expect.stringMatching(/^(DATA_LOSS|UNSAFE_ARCHIVE)$/) });
    // Filtered: assembled from the table of contents even when the snapshot's own tarball is the whole tree.
    await expect(snapshots.exportFiltered({ manifest: planted }, ["**"]).then((s) => s.release())).rejects.toMatchObject({ reason: expect.stringMatching(/^(DATA_LOSS|UNSAFE_ARCHIVE)$/) });
    expect(tree(root)).toEqual(before);
    expect(readdirSync(path.join(base, "data", "workspaces")).filter((name) => name.startsWith("."))).toEqual([]); // no staging left
  });

  it.each(lies.filter(([name]) => /^a (path|name)/.test(name)))("%s: DiffSnapshots refuses it too (it reads only the file list)", async (_name, lie) => {
    const { manifest } = await snapshots.create(await registry.get("w"), { runId: "", labels: {}, changeSet: [], parent: "" });
    const contents = storedContents(storeDir, "w", manifest.id);
    lie(contents);
    plantContents(storeDir, "w", manifest.id, contents);
    await expect(snapshots.diff("w", manifest.id, { live: await registry.get("w") })).rejects.toMatchObject({ reason: "DATA_LOSS" });
  });

  it("a chunk whose stored range holds bytes after its gzip member (zeros, which gunzip passes over)", async () => {
    // An export copies the range as it is: a reader of the archive would stop at them, and the files after would be lost.
    const { manifest } = await snapshots.create(await registry.get("w"), { runId: "", labels: {}, changeSet: [], parent: "" });
    const contents = storedContents(storeDir, "w", manifest.id);
    const tarballFile = path.join(storeDir, manifest.tarball);
    const tarball = readFileSync(tarballFile);
    const end = contents.chunks.offset[0]! + contents.chunks.length[0]!;
    const padded = Buffer.concat([tarball.subarray(0, end), Buffer.alloc(64), tarball.subarray(end)]);
    writeFileSync(tarballFile, padded);
    contents.chunks.length[0]! += 64;
    contents.chunks.offset.forEach((offset, c) => void (offset >= end && (contents.chunks.offset[c] = offset + 64)));
    contents.tarballs[0]!.bytes = padded.length;
    plantContents(storeDir, "w", manifest.id, contents);
    const planted = await snapshots.find("w", manifest.id);
    await expect(snapshots.exportFiltered({ manifest: planted }, ["**"]).then((s) => s.release())).rejects.toMatchObject({ reason: "DATA_LOSS" });
    rmSync(path.join(root, contents.files.paths[0]!.slice(1))); // the file of that chunk: the restore must read it
    writeFileSync(path.join(root, "marker.txt"), "live\n");
    const before = tree(root);
    await expect(snapshots.restore("w", planted)).rejects.toMatchObject({ reason: "DATA_LOSS" });
    expect(tree(root)).toEqual(before);
  });
});

describe("a restore from a snapshot in the older format (one tarball, no table of contents)", () => {
  it("gives the tree back with its mtimes, to the second", async () => {
    const source = mkdtempSync(path.join(base, "old-"));
    mkdirSync(path.join(source, "dir", "inner"), { recursive: true });
    mkdirSync(path.join(source, "empty"));
    writeFileSync(path.join(source, "dir", "inner", "a.txt"), "a\n");
    writeFileSync(path.join(source, "top.txt"), "top\n");
    symlinkSync("top.txt", path.join(source, "link"));
    ageTree(source);
    const id = await writeOldSnapshot(new FileStore(storeDir), "w", source);
    await snapshots.restore("w", await snapshots.find("w", id));
    expect(tree(root)).toEqual(tree(source));
    expect(mtimes(root)).toEqual(mtimes(source));
  });
});

describe("an import (extracted member by member, as a snapshot in the older format is)", () => {
  it("gives what it creates the archive's mtimes, to the second", async () => {
    const source = mkdtempSync(path.join(base, "import-"));
    mkdirSync(path.join(source, "dir", "inner"), { recursive: true });
    writeFileSync(path.join(source, "dir", "inner", "a.txt"), "a\n");
    symlinkSync("dir/inner/a.txt", path.join(source, "link"));
    ageTree(source);
    const archive = execFileSync("tar", ["-czf", "-", "-C", source, "."]);
    await snapshots.importArchive("w", ["imported"], (async function* () {
      yield archive;
    })());
    expect(tree(path.join(root, "imported"))).toEqual(tree(source));
    expect(mtimes(path.join(root, "imported"))).toEqual(mtimes(source));
  });
});
