// Runs, change sets and snapshots against a real daemon with a file:// store.
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ChangeKind } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import { collect, ensureBuilt, expectError, ROOT, startDaemon } from "./daemon.js";
import { download, exportTarball, runScenario, tarList } from "./runs-scenario.js";

const scratch = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-runs-")));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let counter = 0;
const freshStore = () => path.join(scratch, `store-${++counter}`);
const sha = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

describe("the end-to-end scenario", () => {
  it("file:// store: daemon B with an empty data dir restores what daemon A's run wrote", async () => {
    await runScenario(`file://${freshStore()}`);
  }, 60_000);
});

describe("runs", () => {
  it("an active run and its change set survive a restart; SIGTERM snapshots the active run", async () => {
    const store = freshStore();
    const dataDir = path.join(scratch, "data-restart");
    mkdirSync(dataDir);
    const a = await startDaemon({ dataDir, args: ["--store", `file://${store}`] });
    const { run } = await a.client.workspaces.startRun({ workspace: "w", labels: { who: "a" } });
    await a.client.files.write({ workspace: "w", path: "x.txt", body: { case: "content", value: "1\n" } });
    await a.client.files.write({ workspace: "w", path: "x.txt", body: { case: "content", value: "2\n" } });
    await a.stop(true);
    const b = await startDaemon({ dataDir, args: ["--store", `file://${store}`] });
    try {
      // the shutdown snapshot, tagged as such, with the run's id
      const { snapshots } = await b.client.workspaces.listSnapshots({ workspace: "w" });
      expect(snapshots).toHaveLength(1);
      expect(snapshots[0]!.runId).toBe(run!.id);
      expect(snapshots[0]!.labels["filetools.shutdown"]).toBe("true");
      await expectError(b.client.workspaces.startRun({ workspace: "w" }), "FAILED_PRECONDITION", "RUN_ACTIVE");
      await b.client.files.delete({ workspace: "w", path: "x.txt" });
      const changes = (await collect(b.client.workspaces.getChangeSet({ workspace: "w", runId: run!.id }))).flatMap((m) => m.changes);
      expect(changes.map((c) => c.kind)).toEqual([ChangeKind.CREATE, ChangeKind.MODIFY, ChangeKind.DELETE]);
      expect(changes[2]!.sha256Before).toBe(sha("2\n"));
      const finished = await b.client.workspaces.finishRun({ workspace: "w", runId: run!.id });
      expect(finished.changes).toMatchObject({ created: 1n, modified: 1n, deleted: 1n });
      await expectError(b.client.workspaces.finishRun({ workspace: "w", runId: run!.id }), "NOT_FOUND");
    } finally {
      await b.stop();
    }
  }, 60_000);

  it("two daemons on one store: a FinishRun behind another run's snapshot is refused, publishes nothing, ends the run and keeps its work as a recovered snapshot; snapshots chain by parent", async () => {
    const store = `file://${freshStore()}`;
    const a = await startDaemon({ args: ["--store", store] });
    const b = await startDaemon({ args: ["--store", store] });
    try {
      const runA = (await a.client.workspaces.startRun({ workspace: "shared" })).run!;
      const runB = (await b.client.workspaces.startRun({ workspace: "shared" })).run!;
      await a.client.files.write({ workspace: "shared", path: "a.txt", body: { case: "content", value: "from a\n" } });
      await b.client.files.write({ workspace: "shared", path: "b.txt", body: { case: "content", value: "from b\n" } });
      const first = (await b.client.workspaces.finishRun({ workspace: "shared", runId: runB.id })).snapshot!;
      expect(first.parent).toBe("");

      // A started before B's snapshot existed: publishing now would drop b.txt from the newest snapshot.
      const stale = await expectError(a.client.workspaces.finishRun({ workspace: "shared", runId: runA.id }), "FAILED_PRECONDITION", "CONTENT_CHANGED");
      expect(stale.message).toContain(`has a newer snapshot, ${first.id}, published by another run`);
      expect(stale.metadata).toMatchObject({ newest_snapshot: first.id, parent: "" });
      expect((await a.client.workspaces.listSnapshots({ workspace: "shared" })).snapshots.map((s) => s.id)).toEqual([first.id]);
      // Its work is kept off the main line, and the run has ended.
      const recovered = (await a.client.workspaces.listSnapshots({ workspace: "shared", includeRecovered: true })).snapshots.find((s) => s.id === stale.metadata.recovered_snapshot)!;
      expect(recovered).toMatchObject({ runId: runA.id, recovered: true, parent: "" });
      expect(recovered.recoveredReason).toContain(`another run published ${first.id}`);
      await expectError(a.client.workspaces.finishRun({ workspace: "shared", runId: runA.id, snapshot: false }), "NOT_FOUND");

      // A run that starts from the newest snapshot follows it.
      await a.client.workspaces.deleteWorkspace({ workspace: "shared" });
      const runC = (await a.client.workspaces.startRun({ workspace: "shared" })).run!;
      expect(runC.restoredFrom).toBe(first.id);
      const second = (await a.client.workspaces.finishRun({ workspace: "shared", runId: runC.id })).snapshot!;
      expect(second.parent).toBe(first.id);
      const listed = (await b.client.workspaces.listSnapshots({ workspace: "shared" })).snapshots;
      expect(listed.map((s) => [s.id, s.parent])).toEqual([
        [second.id, first.id],
        [first.id, ""],
      ]);
    } finally {
      await a.stop();
      await b.stop();
    }
  }, 60_000);

  it("StartRun LATEST starts from the copy while it is a copy of the newest; NONE never restores; an id always, keeping the copy's unpublished changes first", async () => {
    const d = await startDaemon({ args: ["--store", `file://${freshStore()}`] });
    try {
      const c = d.client.workspaces;
      const r1 = (await c.startRun({ workspace: "p" })).run!;
      await d.client.files.write({ workspace: "p", path: "f.txt", body: { case: "content", value: "v1\n" } });
      const s1 = (await c.finishRun({ workspace: "p", runId: r1.id })).snapshot!;
      await d.client.files.write({ workspace: "p", path: "f.txt", body: { case: "content", value: "v2\n" } });
      const r2 = (await c.startRun({ workspace: "p" })).run!; // not empty: no restore
      expect(r2.restoredFrom).toBe("");
      expect((await download(d.client, "p", "f.txt")).toString()).toBe("v2\n");
      await c.finishRun({ workspace: "p", runId: r2.id, snapshot: false });
      const r3 = (await c.startRun({ workspace: "p", restore: s1.id })).run!;
      expect(r3.restoredFrom).toBe(s1.id);
      expect(r3.startedFrom).toBe(s1.id);
      expect((await download(d.client, "p", "f.txt")).toString()).toBe("v1\n");
      // v2 was never published: it is kept as a recovered snapshot of r2's changes on s1.
      const kept = (await c.listSnapshots({ workspace: "p", includeRecovered: true })).snapshots.filter((s) => s.recovered);
      expect(kept.map((s) => [s.runId, s.parent])).toEqual([[r2.id, s1.id]]);
      await c.finishRun({ workspace: "p", runId: r3.id, snapshot: false });
      await d.client.files.delete({ workspace: "p", path: "f.txt" });
      const r4 = (await c.startRun({ workspace: "p", restore: "NONE" })).run!;
      expect(r4.restoredFrom).toBe("");
      await c.finishRun({ workspace: "p", runId: r4.id, snapshot: false });
      await expectError(c.startRun({ workspace: "p", restore: "20990101T000000000Z-00000000" }), "NOT_FOUND");
    } finally {
      await d.stop();
    }
  }, 60_000);
});

describe("snapshots", () => {
  it("--keep-snapshots prunes the oldest after a successful snapshot", async () => {
    const store = freshStore();
    const d = await startDaemon({ args: ["--store", `file://${store}`, "--keep-snapshots", "2"] });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const { run } = await d.client.workspaces.startRun({ workspace: "k" });
        await d.client.files.write({ workspace: "k", path: "n.txt", body: { case: "content", value: `${i}\n` } });
        ids.push((await d.client.workspaces.finishRun({ workspace: "k", runId: run!.id })).snapshot!.id);
      }
      const { snapshots } = await d.client.workspaces.listSnapshots({ workspace: "k" });
      expect(snapshots.map((s) => s.id)).toEqual([ids[3], ids[2]]);
      const kept = [ids[2], ids[3]].flatMap((id) => [`${id}.json`, `${id}.tar.gz`, `${id}.contents.json.gz`]);
      expect(readdirSync(path.join(store, "k")).sort()).toEqual(kept.sort());
    } finally {
      await d.stop();
    }
  }, 60_000);

  it("--keep-snapshots keeps an older snapshot's tarball while a kept one still reads from it, and deletes it once none does", async () => {
    const store = freshStore();
    const d = await startDaemon({ args: ["--store", `file://${store}`, "--keep-snapshots", "2"] });
    try {
      const ids: string[] = [];
      const run = async (files: Record<string, string>): Promise<void> => {
        const { run } = await d.client.workspaces.startRun({ workspace: "k" });
        for (const [file, value] of Object.entries(files)) await d.client.files.write({ workspace: "k", path: file, body: { case: "content", value } });
        ids.push((await d.client.workspaces.finishRun({ workspace: "k", runId: run!.id })).snapshot!.id);
      };
      await run({ "kept.txt": "written once\n", "n.txt": "0\n" });
      for (let i = 1; i < 4; i++) await run({ "n.txt": `${i}\n` });
      // ids[0] is pruned, but its tarball holds kept.txt, which ids[2] and ids[3] still read; their tables of contents are deltas that stand on its table.
      expect(readdirSync(path.join(store, "k")).filter((n) => n.startsWith(ids[0]!)).sort()).toEqual([`${ids[0]}.contents.json.gz`, `${ids[0]}.tar.gz`]);
      const restored = await d.client.workspaces.restoreSnapshot({ workspace: "k", snapshotId: ids[2]! });
      expect(restored).toBeDefined();
      expect(readFileSync(path.join(d.hostDir("k"), "kept.txt"), "utf8")).toBe("written once\n");
      // kept.txt changes: once the snapshots that read it from ids[0]'s tarball are pruned, nothing holds that tarball.
      await run({ "kept.txt": "changed\n" });
      await run({ "n.txt": "5\n" });
      // Its tarball goes; its table stays only while a kept snapshot's delta stands on it (a table written whole frees it).
      const left = readdirSync(path.join(store, "k")).filter((n) => n.startsWith(ids[0]!));
      expect(left.filter((n) => n.endsWith(".tar.gz"))).toEqual([]);
      const bases = readdirSync(path.join(store, "k"))
        .filter((n) => n.endsWith(".json"))
        .flatMap((n) => (JSON.parse(readFileSync(path.join(store, "k", n), "utf8")).contents?.bases ?? []).map((b: { key: string }) => b.key));
      for (const name of left) expect(bases).toContain(`k/${name}`);
    } finally {
      await d.stop();
    }
  }, 60_000);

  it("ExportSnapshot live and with include globs; DeleteWorkspace delete_snapshots", async () => {
    const store = freshStore();
    const d = await startDaemon({ args: ["--store", `file://${store}`] });
    try {
      const ws = "e";
      const { run } = await d.client.workspaces.startRun({ workspace: ws });
      await d.client.files.write({ workspace: ws, path: "report.md", body: { case: "content", value: "# r\n" } });
      await d.client.files.write({ workspace: ws, path: "out/chart.csv", body: { case: "content", value: "a,b\n" } });
      await d.client.files.write({ workspace: ws, path: "out/notes.md", body: { case: "content", value: "n\n" } });
      await d.client.workspaces.finishRun({ workspace: ws, runId: run!.id });
      await d.client.files.write({ workspace: ws, path: "later.md", body: { case: "content", value: "later\n" } });

      const live = await exportTarball(d.client, { workspace: ws, live: true });
      expect(sha(live.bytes)).toBe(live.header.sha256);
      expect(BigInt(live.bytes.length)).toBe(live.header.size);
      expect(tarList(live.bytes)).toEqual(["later.md", "out/", "out/chart.csv", "out/notes.md", "report.md"]);
      expect(live.header.fileCount).toBe(4n);

      const md = await exportTarball(d.client, { workspace: ws, live: true, include: ["**/*.md"] });
      expect(tarList(md.bytes)).toEqual(["later.md", "out/notes.md", "report.md"]);
      expect(md.header.fileCount).toBe(3n);

      const stored = await exportTarball(d.client, { workspace: ws, include: ["out/**"] });
      expect(tarList(stored.bytes)).toEqual(["out/chart.csv", "out/notes.md"]);
      expect(sha(stored.bytes)).toBe(stored.header.sha256);

      await d.client.workspaces.deleteWorkspace({ workspace: ws });
      expect((await d.client.workspaces.listSnapshots({ workspace: ws })).snapshots).toHaveLength(1);
      await d.client.workspaces.createWorkspace({ workspace: ws });
      await d.client.workspaces.deleteWorkspace({ workspace: ws, deleteSnapshots: true });
      expect((await d.client.workspaces.listSnapshots({ workspace: ws })).snapshots).toHaveLength(0);
    } finally {
      await d.stop();
    }
  }, 60_000);
});

describe("the store failing", () => {
  it("at use: UNAVAILABLE / STORE_UNAVAILABLE, the run stays active, the daemon stays up", async () => {
    const store = freshStore();
    const d = await startDaemon({ args: ["--store", `file://${store}`] });
    try {
      const { run } = await d.client.workspaces.startRun({ workspace: "s" });
      await d.client.files.write({ workspace: "s", path: "a.txt", body: { case: "content", value: "a\n" } });
      rmSync(store, { recursive: true, force: true });
      writeFileSync(store, "not a directory any more");
      await expectError(d.client.workspaces.finishRun({ workspace: "s", runId: run!.id }), "UNAVAILABLE", "STORE_UNAVAILABLE");
      await expectError(d.client.workspaces.listSnapshots({ workspace: "s" }), "UNAVAILABLE", "STORE_UNAVAILABLE");
      expect((await d.client.files.stat({ workspace: "s", path: "a.txt" })).file?.path).toBe("/a.txt");
      rmSync(store);
      const finished = await d.client.workspaces.finishRun({ workspace: "s", runId: run!.id });
      expect(finished.snapshot?.fileCount).toBe(1n);
    } finally {
      await d.stop();
    }
  }, 60_000);

  it("at start-up: the daemon refuses to start, with a clear message", () => {
    ensureBuilt();
    const blocker = path.join(scratch, "blocker");
    writeFileSync(blocker, "x");
    const dataDir = mkdtempSync(path.join(scratch, "data-"));
    const result = spawnSync(process.execPath, [path.join(ROOT, "dist/server/main.js"), "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--store", `file://${blocker}/snaps`], {
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/snapshot store file:\/\/.*not usable/);
    expect(result.stdout).not.toMatch(/listening/);
  });
});

describe("a crash during a snapshot", () => {
  it("kill -9 mid-upload: earlier snapshots intact, no partial manifest, the run still active", async () => {
    const store = freshStore();
    const dataDir = path.join(scratch, "data-crash");
    const host = path.join(scratch, "crash-host");
    mkdirSync(dataDir);
    mkdirSync(host);
    const args = ["--store", `file://${store}`];
    const a = await startDaemon({ dataDir, args, binds: { big: host } });
    const first = await a.client.workspaces.startRun({ workspace: "big" });
    writeFileSync(path.join(host, "small.txt"), "small\n");
    const s1 = (await a.client.workspaces.finishRun({ workspace: "big", runId: first.run!.id })).snapshot!;
    // ~120 MB of incompressible data makes the next snapshot take a while
    for (let i = 0; i < 12; i++) {
      const block = Buffer.alloc(10 * 1024 * 1024);
      for (let j = 0; j < block.length; j += 4) block.writeUInt32LE((Math.random() * 2 ** 32) >>> 0, j);
      writeFileSync(path.join(host, `blob-${i}.bin`), block);
    }
    const second = await a.client.workspaces.startRun({ workspace: "big" });
    const pending = a.client.workspaces.finishRun({ workspace: "big", runId: second.run!.id }).catch(() => undefined);
    // wait until the upload is under way (a temp file in the store), then kill -9
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && !readdirSync(path.join(store, "big")).some((n) => n.includes(".tmp-"))) await new Promise((r) => setTimeout(r, 5));
    expect(readdirSync(path.join(store, "big")).some((n) => n.includes(".tmp-"))).toBe(true);
    a.proc.kill("SIGKILL");
    await new Promise((r) => a.proc.once("exit", r));
    await pending;
    a.client.close();

    const manifests = readdirSync(path.join(store, "big")).filter((n) => n.endsWith(".json"));
    expect(manifests).toEqual([`${s1.id}.json`]);
    const b = await startDaemon({ dataDir, args, binds: { big: host } });
    try {
      const { snapshots } = await b.client.workspaces.listSnapshots({ workspace: "big" });
      expect(snapshots.map((s) => s.id)).toEqual([s1.id]);
      expect(sha(readFileSync(path.join(store, "big", `${s1.id}.tar.gz`)))).toBe(s1.sha256);
      const exported = await exportTarball(b.client, { workspace: "big", snapshotId: s1.id });
      expect(sha(exported.bytes)).toBe(s1.sha256);
      // the interrupted run is still active, and its temp file was swept at start-up
      await expectError(b.client.workspaces.startRun({ workspace: "big" }), "FAILED_PRECONDITION", "RUN_ACTIVE");
      expect(readdirSync(path.join(store, "big")).filter((n) => n.includes(".tmp-"))).toEqual([]);
      const s2 = (await b.client.workspaces.finishRun({ workspace: "big", runId: second.run!.id })).snapshot!;
      expect(s2.fileCount).toBe(13n);
    } finally {
      await b.stop();
    }
    expect(existsSync(store)).toBe(true);
  }, 120_000);
});
