// A newer daemon on the oldest supported data directory and store (docs/operations.md,
// "Version and compatibility": a daemon reads what every earlier release wrote).
//
// The oldest release is 0.1.0 (commit 131265d). Its daemon left, after a run it
// finished: the workspace's files in DATA_DIR/workspaces/<id>; in the file://
// store (DATA_DIR/snapshots) the snapshot as one plain .tar.gz and a manifest
// with the file list inline (no table of contents: test/support/old-format.ts)
// and the head, .heads/<id>.json = {snapshot, runId, node, publishedAt}. It is
// built here from those formats, without a record of what the copy is of (no
// DATA_DIR/copies, DATA_DIR/stat-cache), which the docs say a daemon compares
// file by file with the newest snapshot.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileStore } from "../../server/snapshots/file-store.js";
import { writeOldSnapshot } from "../support/old-format.js";
import { ageTree, mtimes } from "../support/trees.js";
import { expectError, startDaemon, type Daemon } from "./daemon.js";

const FILES: Record<string, string> = { "q3.md": "# Q3\n", "notes/a.txt": "one\ntwo\n" };

let dataDir: string;
let oldId: string;
/** The old snapshot's entries' mtimes (its tar headers': whole seconds). */
let oldMtimes: Record<string, number>;
let d: Daemon;

beforeAll(async () => {
  dataDir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-e2e-old-layout-")));
  const workspace = path.join(dataDir, "workspaces", "reports");
  for (const [name, text] of Object.entries(FILES)) {
    mkdirSync(path.dirname(path.join(workspace, name)), { recursive: true });
    writeFileSync(path.join(workspace, name), text);
  }
  ageTree(workspace);
  oldMtimes = mtimes(workspace);
  const storeDir = path.join(dataDir, "snapshots");
  oldId = await writeOldSnapshot(new FileStore(storeDir), "reports", workspace);
  mkdirSync(path.join(storeDir, ".heads"));
  writeFileSync(
    path.join(storeDir, ".heads", "reports.json"),
    JSON.stringify({ snapshot: oldId, runId: "", node: "old-node-1", publishedAt: new Date().toISOString() }),
  );
  d = await startDaemon({ dataDir });
}, 60_000);

afterAll(async () => {
  await d?.stop(true);
  rmSync(dataDir, { recursive: true, force: true });
});

describe("a 0.1.0 data directory and store", () => {
  it("lists the old snapshot on the main line and exports it", async () => {
    const ws = d.client.workspace("reports");
    expect((await ws.listSnapshots()).map((s) => [s.id, s.tarballs])).toEqual([[oldId, 1]]); // one tarball: the whole tree
    const out = path.join(dataDir, "old.tar.gz");
    await ws.exportSnapshot(out, { snapshotId: oldId });
    const listed = execFileSync("tar", ["-tzf", out], { encoding: "utf8" }).split("\n").filter(Boolean);
    expect(listed.map((n) => n.replace(/^\.?\//, "")).filter((n) => !n.endsWith("/")).sort()).toEqual(Object.keys(FILES).sort());
  });

  it("says a read at the old snapshot needs a restore (it has no table of contents)", async () => {
    await expectError(d.client.workspace("reports").readText("q3.md", { atSnapshot: oldId }), "FAILED_PRECONDITION", "SNAPSHOT_WITHOUT_CONTENTS");
  });

  it("starts a run from the copy as it is (the same files as the newest snapshot), and its snapshot is in the seekable format", async () => {
    const ws = d.client.workspace("reports");
    const run = await ws.startRun();
    expect(run.startedFrom).toBe(oldId);
    expect(run.restoredFrom).toBe("");
    await ws.writeText("q3.md", "# Q3 2026\n");
    const { snapshot } = await ws.finishRun(run.id);
    expect(snapshot!.parent).toBe(oldId);
    expect(snapshot!.tarballs).toBe(1);
    // The new snapshot is read in place, and diffs against the old one's inline file list.
    expect((await ws.readText("q3.md", { atSnapshot: snapshot!.id })).text).toBe("# Q3 2026\n");
    const { entries, summary } = await ws.diffSnapshots(oldId, { to: snapshot!.id });
    expect(entries.map((e) => e.path)).toEqual(["/q3.md"]);
    expect(summary.modified).toBe(1n);
    expect((await ws.listSnapshots()).map((s) => s.id)).toEqual([snapshot!.id, oldId]);
  });

  it("restores the old snapshot into a fresh daemon's data directory, with its mtimes", async () => {
    const fresh = await startDaemon({ args: ["--store", `file://${path.join(dataDir, "snapshots")}`] });
    try {
      const ws = fresh.client.workspace("reports");
      const run = await ws.startRun({ restore: oldId });
      expect(run.restoredFrom).toBe(oldId);
      expect(readFileSync(path.join(fresh.hostDir("reports"), "notes/a.txt"), "utf8")).toBe(FILES["notes/a.txt"]);
      expect(readFileSync(path.join(fresh.hostDir("reports"), "q3.md"), "utf8")).toBe(FILES["q3.md"]);
      expect(mtimes(fresh.hostDir("reports"))).toEqual(oldMtimes);
    } finally {
      await fresh.stop();
    }
  });
});
