// Issue 25 item 8, through a real daemon: a bomb planted in the store (a
// tarball and a manifest with a matching size and sha256, written straight
// into the file:// store's directory) is refused on every path that inflates
// a stored snapshot (RestoreSnapshot, StartRun's restore by id and LATEST,
// ExportSnapshot with include) with UNSAFE_ARCHIVE, quickly, changing
// nothing and leaving no scratch file. A stored snapshot may inflate only to
// what its manifest's file list accounts for, plus 256 MiB.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { tree } from "../support/trees.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { rawHeader } from "../support/tar.js";
import { asOldFormat, plantContents, storedContents } from "../support/old-format.js";
import { collect, expectError, forbidHostPath, startDaemon, type Daemon } from "./daemon.js";

const GiB = 1024 ** 3;
/** Refused well within the 5 s; the bound leaves room for a loaded 2-core machine (the figures are printed). */
const BOUND_MS = 20_000;


/**
 * A gzip stream of `head`, then `gib` GiB of zeros: gzip members of one
 * compressed 64 MiB block of zeros, concatenated (about 1 MB per GiB).
 */
function zeroBomb(gib: number, head: Buffer): Buffer {
  const block = gzipSync(Buffer.alloc(64 << 20), { level: 9 });
  return Buffer.concat([gzipSync(head), ...Array<Buffer>(gib * 16).fill(block)]);
}

/** The bombs, made once: what each is, and its bytes. */
const bombs: Array<{ what: string; bytes: Buffer }> = [];
const zeros20 = () => bombs[0]!.bytes;

let d: Daemon;
let store: string;
beforeAll(async () => {
  store = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-bomb-store-")));
  d = await startDaemon({ args: ["--store", `file://${store}`] });
  forbidHostPath(d.dataDir);
  bombs.push({ what: "20 GiB of zeros", bytes: zeroBomb(20, Buffer.alloc(0)) });
  bombs.push({ what: "a member that says it holds 7 GiB, of zeros (within the content cap)", bytes: zeroBomb(8, rawHeader({ name: "zeros.bin", size: 7 * GiB })) });
});
afterAll(async () => {
  await d.stop();
  rmSync(store, { recursive: true, force: true });
});

/** A workspace with a snapshot of a.txt (taken through a run), a.txt changed since; the snapshot's id. */
async function workspaceWithSnapshot(workspace: string): Promise<string> {
  const { run } = await d.client.workspaces.startRun({ workspace, restore: "NONE" });
  await d.client.files.write({ workspace, path: "a.txt", body: { case: "content", value: "snapshotted\n" } });
  const { snapshot } = await d.client.workspaces.finishRun({ workspace, runId: run!.id });
  await d.client.files.write({ workspace, path: "a.txt", body: { case: "content", value: "live\n" } });
  return snapshot!.id;
}

/** Plants `tarball` as the snapshot's, in the older format (one whole tarball), with a manifest that matches its size and sha256 (its file list kept, or dropped). */
function plant(workspace: string, id: string, tarball: Buffer, keepFileList = true): void {
  asOldFormat(store, workspace, id);
  writeFileSync(path.join(store, workspace, `${id}.tar.gz`), tarball);
  const manifestPath = path.join(store, workspace, `${id}.json`);
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  Object.assign(manifest, { sizeBytes: tarball.length, sha256: createHash("sha256").update(tarball).digest("hex") });
  if (!keepFileList) delete manifest.files;
  writeFileSync(manifestPath, JSON.stringify(manifest));
}

/** `call` is refused (UNSAFE_ARCHIVE, or DATA_LOSS for a seekable snapshot's chunk) within the bound, the workspace as it was, no scratch file left; the time it took. */
async function refusedQuickly(workspace: string, call: () => Promise<unknown>, on: Daemon = d, [code, reason] = ["FAILED_PRECONDITION", "UNSAFE_ARCHIVE"]): Promise<number> {
  const before = tree(on.hostDir(workspace));
  const started = performance.now();
  const error = await expectError(call, code!, reason);
  const ms = performance.now() - started;
  expect(error.message).toMatch(/compression bomb/);
  expect(ms).toBeLessThan(BOUND_MS);
  expect(tree(on.hostDir(workspace))).toEqual(before);
  expect(readdirSync(path.join(on.dataDir, "tmp"))).toEqual([]);
  return Math.round(ms);
}

const figures: Record<string, number> = {};
afterAll(() => console.log("planted bombs refused in (ms):", figures));

describe("a bomb planted in the store is refused on every path that inflates it", () => {
  for (const [i, kind] of ["zeros", "member"].entries()) {
    it(`${kind}: RestoreSnapshot, StartRun with its id, ExportSnapshot with include`, async () => {
      const { what, bytes } = bombs[i]!;
      const workspace = `bomb-${kind}`;
      const id = await workspaceWithSnapshot(workspace);
      plant(workspace, id, bytes);
      figures[`${what}: RestoreSnapshot`] = await refusedQuickly(workspace, () => d.client.workspaces.restoreSnapshot({ workspace, snapshotId: id }));
      figures[`${what}: StartRun restore=id`] = await refusedQuickly(workspace, () => d.client.workspaces.startRun({ workspace, restore: id }));
      figures[`${what}: ExportSnapshot include`] = await refusedQuickly(workspace, () => collect(d.client.workspaces.exportSnapshot({ workspace, snapshotId: id, include: ["**"] })));
      // The failed StartRun left no run behind: one starts and finishes.
      const { run } = await d.client.workspaces.startRun({ workspace, restore: "NONE" });
      await d.client.workspaces.finishRun({ workspace, runId: run!.id, snapshot: false });
      expect(readFileSync(path.join(d.hostDir(workspace), "a.txt"), "utf8")).toBe("live\n");
    }, 120_000);
  }

  it("StartRun with LATEST on a fresh runtime's empty workspace, the bomb its newest snapshot", async () => {
    const id = await workspaceWithSnapshot("latest");
    plant("latest", id, zeros20());
    // A new runtime on the same store: its empty copy must be brought to the newest.
    const fresh = await startDaemon({ args: ["--store", `file://${store}`] });
    try {
      await fresh.client.workspaces.createWorkspace({ workspace: "latest" });
      figures["20 GiB of zeros: StartRun LATEST"] = await refusedQuickly("latest", () => fresh.client.workspaces.startRun({ workspace: "latest", restore: "LATEST" }), fresh);
      expect(readdirSync(fresh.hostDir("latest"))).toEqual([]);
    } finally {
      await fresh.stop();
    }
  }, 120_000);

  it("seekable: a chunk whose gzip member inflates past the size its table of contents gives, on every path that reads it", async () => {
    const workspace = "seekable";
    const id = await workspaceWithSnapshot(workspace);
    // 3 GiB of zeros in ~3 MB: within what a chunk of 4 MiB may take compressed (a longer member is refused unread).
    const bomb = zeroBomb(3, Buffer.alloc(0));
    writeFileSync(path.join(store, workspace, `${id}.tar.gz`), bomb);
    const contents = storedContents(store, workspace, id);
    contents.tarballs[0]!.bytes = bomb.length;
    contents.files.sizes[0] = contents.chunks.size[0] = 4 << 20;
    contents.chunks.offset[0] = 0;
    contents.chunks.length[0] = bomb.length;
    plantContents(store, workspace, id, contents);
    const dataLoss: [string, string] = ["DATA_LOSS", "DATA_LOSS"];
    figures["seekable, 20 GiB of zeros in a chunk: RestoreSnapshot"] = await refusedQuickly(workspace, () => d.client.workspaces.restoreSnapshot({ workspace, snapshotId: id }), d, dataLoss);
    figures["seekable, 20 GiB of zeros in a chunk: ExportSnapshot include"] = await refusedQuickly(workspace, () => collect(d.client.workspaces.exportSnapshot({ workspace, snapshotId: id, include: ["**"] })), d, dataLoss);
    figures["seekable, 20 GiB of zeros in a chunk: StartRun restore=id"] = await refusedQuickly(workspace, () => d.client.workspaces.startRun({ workspace, restore: id }), d, dataLoss);
  }, 120_000);

  it("a manifest without a file list (an older daemon's) gets the import's ratio cap", async () => {
    const id = await workspaceWithSnapshot("no-list");
    plant("no-list", id, zeros20(), false);
    figures["20 GiB of zeros, no file list: RestoreSnapshot"] = await refusedQuickly("no-list", () => d.client.workspaces.restoreSnapshot({ workspace: "no-list", snapshotId: id }));
  }, 120_000);
});

/** Replaces a snapshot's stored table of contents by `bytes`, its manifest's size and sha256 made to match (`bases`: its chain, when given). */
function plantTable(workspace: string, id: string, bytes: Buffer, bases?: (ref: object) => object[]): void {
  writeFileSync(path.join(store, workspace, `${id}.contents.json.gz`), bytes);
  const manifestFile = path.join(store, workspace, `${id}.json`);
  const manifest = JSON.parse(readFileSync(manifestFile, "utf8"));
  manifest.contents = { ...manifest.contents, bytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
  if (bases) manifest.contents.bases = bases({ key: manifest.contents.key, bytes: bytes.length, sha256: manifest.contents.sha256 });
  writeFileSync(manifestFile, JSON.stringify(manifest));
}

/** `{"<key>":[0,0,…]}` with 140 million elements: ~280 MB of JSON. V8's JSON.parse ends the process on it (no exception). */
function hugeArray(key: string, extra = ""): Buffer {
  const body = Buffer.alloc(140_000_000 * 2 - 1);
  body.fill("0,");
  return Buffer.concat([Buffer.from(`{${extra}"${key}":[`), body, Buffer.from("]}")]);
}

/** The daemon's peak resident set so far (VmHWM), in MiB. */
function peakMiB(on: Daemon): number {
  return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${on.proc.pid}/status`, "utf8"))![1]) / 1024;
}

describe("stored JSON too large to parse, and chains that come back to a bomb", () => {
  // A daemon per test: what ends the process must not take the others' daemon, and a peak measured is this test's.
  let own: Daemon | undefined;
  afterEach(async () => {
    await own?.stop();
    own = undefined;
  });
  const snapshotOn = async (workspace: string): Promise<{ on: Daemon; id: string }> => {
    const on = (own = await startDaemon({ args: ["--store", `file://${store}`] }));
    const { run } = await on.client.workspaces.startRun({ workspace, restore: "NONE" });
    await on.client.files.write({ workspace, path: "a.txt", body: { case: "content", value: "snapshotted\n" } });
    return { on, id: (await on.client.workspaces.finishRun({ workspace, runId: run!.id })).snapshot!.id };
  };

  it("a table of contents that is a 300 KB gzip of a JSON array of 140 million elements: DATA_LOSS, and the daemon lives", async () => {
    const { on, id } = await snapshotOn("huge-table");
    plantTable("huge-table", id, gzipSync(hugeArray("junk", '"format":1,'), { level: 9 }));
    await expectError(on.client.workspaces.restoreSnapshot({ workspace: "huge-table", snapshotId: id }), "DATA_LOSS", "DATA_LOSS");
    expect(on.unexpectedExit()).toBeUndefined();
  }, 120_000);

  it("a manifest of a JSON array of 140 million elements: ListSnapshots leaves it out, and the daemon lives", async () => {
    const { on, id } = await snapshotOn("huge-manifest");
    writeFileSync(path.join(store, "huge-manifest", "20200101T000000000Z-0badf00d.json"), hugeArray("junk"));
    expect((await on.client.workspaces.listSnapshots({ workspace: "huge-manifest" })).snapshots.map((s) => s.id)).toEqual([id]);
    expect(on.unexpectedExit()).toBeUndefined();
  }, 120_000);

  it("a chain of tables that lists one gzip bomb several times is refused unread; one of distinct bombs inflates one at a time", async () => {
    // 1.125 GiB of zeros (past the 1 GiB an inflated table may take) in ~1.2 MB.
    const bomb = gzipSync(Buffer.alloc(64 << 20), { level: 9 });
    const table = Buffer.concat(Array<Buffer>(18).fill(bomb));
    const { on, id } = await snapshotOn("bomb-chain");
    plantTable("bomb-chain", id, table, (ref) => [ref, ref, ref]);
    const before = peakMiB(on);
    const error = await expectError(on.client.workspaces.restoreSnapshot({ workspace: "bomb-chain", snapshotId: id }), "DATA_LOSS", "DATA_LOSS");
    expect(error.message).toMatch(/twice/);
    // Distinct bombs down the chain (their keys those of tables this workspace could hold): read top first, the first refused ends it.
    const sha256 = createHash("sha256").update(table).digest("hex");
    const others = ["20200101T000000000Z-0000000a", "20200101T000000000Z-0000000b"].map((other) => {
      writeFileSync(path.join(store, "bomb-chain", `${other}.contents.json.gz`), table);
      return { key: `bomb-chain/${other}.contents.json.gz`, bytes: table.length, sha256 };
    });
    plantTable("bomb-chain", id, table, () => others);
    await expectError(on.client.workspaces.restoreSnapshot({ workspace: "bomb-chain", snapshotId: id }), "DATA_LOSS", "DATA_LOSS");
    const grown = peakMiB(on) - before;
    console.log(`bomb chain: peak RSS grew ${grown.toFixed(0)} MiB`);
    expect(grown).toBeLessThan(1536); // one table's inflation, not one per table of the chain
  }, 180_000);
});
