// Times at the edges, below the RPCs: what an archive's headers, a stored
// table of contents and a kept copy give, applied to the second (rounded down
// as stat shows it), before 1970 and past a Date's range too; a Timestamp of a
// time before 1970. The end-to-end round trip is in test/e2e/roundtrip.test.ts.
import { execFileSync } from "node:child_process";
import { lstatSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plantContents, storedContents } from "../../test/support/old-format.js";
import type { ListedEntry } from "../workspace/fingerprint.js";
import { WorkspaceRegistry } from "../workspace/registry.js";
import { FileStore } from "./file-store.js";
import { planInPlace } from "./in-place.js";
import { timestampFromNs } from "../rpc/convert.js";
import type { TreeMember } from "./seekable-read.js";
import { Snapshots } from "./snapshots.js";

let base: string;
let storeDir: string;
let root: string;
let registry: WorkspaceRegistry;
let snapshots: Snapshots;

beforeAll(async () => {
  base = mkdtempSync(path.join(tmpdir(), "review-times-"));
  storeDir = path.join(base, "store");
  registry = await WorkspaceRegistry.start(path.join(base, "data"), new Map());
  await registry.create("w");
  root = path.join(base, "data", "workspaces", "w");
  const store = new FileStore(storeDir);
  await store.check();
  snapshots = new Snapshots(store, 100, path.join(base, "tmp"), registry, { statCacheDir: path.join(base, "data", "stat-cache") });
  await snapshots.prepare();
});

afterAll(() => {
  void registry?.close();
  rmSync(base, { recursive: true, force: true });
});

/** Whole seconds as stat shows them (rounded down). */
const secondsOf = (file: string): bigint => {
  const ns = lstatSync(file, { bigint: true }).mtimeNs;
  const whole = ns / 1_000_000_000n;
  return ns < whole * 1_000_000_000n ? whole - 1n : whole;
};

/** What this file system keeps of `seconds` (ext4 clamps to 1901..2446; tmpfs keeps it). */
function kept(seconds: number): bigint {
  const probe = path.join(base, `probe-${seconds}`);
  writeFileSync(probe, "");
  execFileSync("touch", ["-h", "-d", `@${seconds}`, probe]);
  return secondsOf(probe);
}

describe("ImportArchive (tar-stream) reads GNU base-256 times before 1970", () => {
  it("a member at -1 (1969-12-31 23:59:59) keeps -1, not 0", async () => {
    const source = mkdtempSync(path.join(base, "import-"));
    writeFileSync(path.join(source, "a.txt"), "a\n");
    writeFileSync(path.join(source, "b.txt"), "b\n");
    execFileSync("touch", ["-d", "@-1", path.join(source, "a.txt")]);
    execFileSync("touch", ["-d", "@-2", path.join(source, "b.txt")]);
    const archive = execFileSync("tar", ["--format=gnu", "-cz", "-C", source, "a.txt", "b.txt"], { stdio: ["ignore", "pipe", "ignore"] });
    await snapshots.importArchive("w", ["imported"], (async function* () {
      yield archive;
    })());
    expect(secondsOf(path.join(root, "imported", "b.txt"))).toBe(-2n);
    expect(secondsOf(path.join(root, "imported", "a.txt"))).toBe(-1n);
  });
});

describe("a restore of a table of contents whose mtimes the schema accepts, past a Date's range (±8.64e12 s)", () => {
  it("restores them (a Date cannot hold them: EINVAL)", async () => {
    mkdirSync(path.join(root, "far"), { recursive: true });
    writeFileSync(path.join(root, "far", "future.txt"), "future\n");
    const { manifest } = await snapshots.create(await registry.get("w"), { runId: "", labels: {}, changeSet: [], parent: "" });
    const contents = storedContents(storeDir, "w", manifest.id) as unknown as { files: { paths: string[] }; mtimes: number[]; directories: { paths: string[]; mtimes: number[] } };
    const file = contents.files.paths.indexOf("/far/future.txt");
    const dir = contents.directories.paths.indexOf("/far");
    expect(file).toBeGreaterThanOrEqual(0);
    expect(dir).toBeGreaterThanOrEqual(0);
    contents.mtimes[file] = 10_000_000_000_000; // year ~318857: tmpfs and btrfs hold it, ext4 clamps it (2446)
    contents.directories.mtimes[dir] = -10_000_000_000_000;
    plantContents(storeDir, "w", manifest.id, contents as never);
    const planted = await snapshots.find("w", manifest.id);
    rmSync(path.join(root, "far"), { recursive: true }); // so that the restore writes them
    await snapshots.restore("w", planted);
    expect(secondsOf(path.join(root, "far", "future.txt"))).toBe(kept(10_000_000_000_000));
    expect(secondsOf(path.join(root, "far"))).toBe(kept(-10_000_000_000_000));
  });
});

describe("planInPlace retimes a kept entry whose second (rounded down, as a table of contents records it) is not the snapshot's", () => {
  const member = (mtime: number): TreeMember => ({ path: "/d", sha256: "", chunks: [], header: { name: "d", type: "directory", mode: 0o755, size: 0, mtime } }) as unknown as TreeMember;
  const live = (mtimeNs: bigint): ListedEntry => ({ parts: ["d"], path: "/d", type: "directory", mode: 0o755, version: "v", size: 0n, ctimeNs: 0n, mtimeNs });
  it.each([
    // [live ns, snapshot seconds, retimed?]
    [-500_000_000n, 0, true], // live second -1 (1969-12-31 23:59:59.5), snapshot 0
    [-1_500_000_000n, -1, true], // live second -2, snapshot -1
    [-1_500_000_000n, -2, false], // the same second: nothing to do
    [1_500_000_000n, 1, false],
  ])("live %s ns, snapshot %s s: retimed %s", (ns, mtime, retimed) => {
    const plan = planInPlace([member(mtime)], [live(ns)], new Map());
    expect(plan.retime.length > 0).toBe(retimed);
  });
});

describe("a restore into the copy the snapshot read (restoreInPlace), a directory's stored mtime past a Date's range", () => {
  it("retimes it, not EINVAL", async () => {
    mkdirSync(path.join(root, "kept"), { recursive: true });
    writeFileSync(path.join(root, "kept", "k.txt"), "k\n");
    const { manifest } = await snapshots.create(await registry.get("w"), { runId: "", labels: {}, changeSet: [], parent: "" });
    const contents = storedContents(storeDir, "w", manifest.id) as unknown as { directories: { paths: string[]; mtimes: number[] } };
    contents.directories.mtimes[contents.directories.paths.indexOf("/kept")] = -10_000_000_000_000;
    plantContents(storeDir, "w", manifest.id, contents as never);
    await snapshots.restore("w", await snapshots.find("w", manifest.id));
    expect(secondsOf(path.join(root, "kept"))).toBe(kept(-10_000_000_000_000));
  });
});

describe("a Timestamp of a time before 1970 with a fraction", () => {
  it.each([
    [-1_500_000_000n, -2n, 500_000_000],
    [-1n, -1n, 999_999_999],
    [-2_000_000_000n, -2n, 0],
    [1_500_000_000n, 1n, 500_000_000],
  ])("%s ns: %s s and %s ns, nanos never negative", (ns, seconds, nanos) => {
    expect(timestampFromNs(ns)).toEqual({ seconds, nanos });
  });
});

describe("a time past a safe integer of seconds (a tmpfs holds 2^62 s)", () => {
  it("is cut to 2^53 - 1 s in the table of contents, which a restore then reads", async () => {
    // /dev/shm is a tmpfs on Linux; the registry's own data dir stays where it is
    const shm = mkdtempSync(path.join("/dev/shm", "times-"));
    const farRegistry = await WorkspaceRegistry.start(path.join(shm, "data"), new Map());
    try {
      await farRegistry.create("far");
      const farRoot = path.join(shm, "data", "workspaces", "far");
      writeFileSync(path.join(farRoot, "aeons.txt"), "aeons\n");
      execFileSync("touch", ["-d", "@4611686018427387904", path.join(farRoot, "aeons.txt")]);
      expect(lstatSync(path.join(farRoot, "aeons.txt"), { bigint: true }).mtimeNs / 1_000_000_000n).toBe(4611686018427387904n);
      const farSnapshots = new Snapshots(new FileStore(path.join(shm, "store")), 100, path.join(shm, "tmp"), farRegistry, {});
      await farSnapshots.prepare();
      const { manifest } = await farSnapshots.create(await farRegistry.get("far"), { runId: "", labels: {}, changeSet: [], parent: "" });
      rmSync(path.join(farRoot, "aeons.txt"));
      // read back from the store, as another daemon would (not from what this one remembers of the table it wrote)
      const reading = new Snapshots(new FileStore(path.join(shm, "store")), 100, path.join(shm, "tmp"), farRegistry, {});
      await reading.prepare();
      await reading.restore("far", await reading.find("far", manifest.id));
      expect(lstatSync(path.join(farRoot, "aeons.txt"), { bigint: true }).mtimeNs / 1_000_000_000n).toBe(BigInt(Number.MAX_SAFE_INTEGER));
    } finally {
      await farRegistry.close();
      rmSync(shm, { recursive: true, force: true });
    }
  });
});
