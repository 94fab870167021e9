// The store is the truth, a workspace its verified copy: daemons with old
// copies of a workspace (a daemon that ran it before, one restarted on its
// data dir, a bound directory changed behind the daemon's back) start their
// runs from the newest published snapshot and never publish over a run they
// did not start from; what they hold that was never published is kept as a
// recovered snapshot. On file:// (heads compared under a lock) and s3://
// (If-Match), with leases on s3://: released by overwriting, never deleted;
// a restarted daemon resumes a run only while its lease still names it.
import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSeaweedfs, type Seaweedfs } from "../support/seaweedfs.js";
import { ensureBuilt, expectError, startDaemon, type Daemon } from "./daemon.js";

const daemons: Daemon[] = [];
let s3: Seaweedfs;

beforeAll(async () => {
  ensureBuilt();
  s3 = await startSeaweedfs();
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: s3.accessKey, AWS_SECRET_ACCESS_KEY: s3.secretKey });
}, 120_000);

afterAll(async () => {
  for (const d of daemons) await d.stop().catch(() => undefined);
  await s3?.stop();
});

// Room for a loaded machine (2 shared cores): a lease must not expire under a run that is only slow.
const TTL_MS = 3000;

async function daemon(store: string, options: { dataDir?: string; binds?: Record<string, string>; node?: string } = {}): Promise<Daemon> {
  const args = ["--store", store, "--node-name", options.node ?? `node-${daemons.length}`];
  if (store.startsWith("s3://")) args.push("--s3-endpoint", s3.endpoint, "--s3-force-path-style", "--lease-ttl-ms", String(TTL_MS));
  const d = await startDaemon({ args, dataDir: options.dataDir, binds: options.binds });
  daemons.push(d);
  return d;
}

const fileStore = () => `file://${realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-truth-store-")))}`;
const s3Store = () => `s3://${s3.bucket}/truth-${randomUUID()}`;
const write = (d: Daemon, ws: string, p: string, text: string) => d.client.files.write({ workspace: ws, path: p, body: { case: "content", value: text } });
const read = (d: Daemon, ws: string, p: string) => readFileSync(path.join(d.hostDir(ws), p), "utf8");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One run: start, write, finish; the snapshot published. */
async function runOnce(d: Daemon, ws: string, files: Record<string, string>) {
  const run = (await d.client.workspaces.startRun({ workspace: ws })).run!;
  for (const [p, text] of Object.entries(files)) await write(d, ws, p, text);
  return { run, snapshot: (await d.client.workspaces.finishRun({ workspace: ws, runId: run.id })).snapshot! };
}

for (const kind of ["file", "s3"] as const) {
  const storeOf = kind === "file" ? fileStore : s3Store;

  describe(`a daemon with an old copy (${kind}://)`, () => {
    it("starts from the newest snapshot, not its copy, and publishes nothing that undoes another daemon's run", async () => {
      const store = storeOf();
      const a = await daemon(store);
      const b = await daemon(store);
      const first = await runOnce(a, "w", { "/a.txt": "a1\n" });
      const second = await runOnce(b, "w", { "/b.txt": "b1\n" }); // B restores A's and adds its own
      expect(second.run.startedFrom).toBe(first.snapshot.id);
      // A's copy is of first: its next run restores second, and its snapshot keeps b.txt.
      const third = await runOnce(a, "w", { "/a.txt": "a2\n" });
      expect(third.run).toMatchObject({ restoredFrom: second.snapshot.id, startedFrom: second.snapshot.id });
      expect(third.snapshot.parent).toBe(second.snapshot.id);
      expect(read(a, "w", "b.txt")).toBe("b1\n");
      const listed = (await b.client.workspaces.listSnapshots({ workspace: "w", includeRecovered: true })).snapshots;
      expect(listed.map((s) => [s.id, s.parent, s.recovered])).toEqual([
        [third.snapshot.id, second.snapshot.id, false],
        [second.snapshot.id, first.snapshot.id, false],
        [first.snapshot.id, "", false],
      ]);
      const shown = await a.client.workspaces.getWorkspace({ workspace: "w" });
      expect(shown).toMatchObject({ newestSnapshot: third.snapshot.id, copyOf: third.snapshot.id, unpublishedChanges: false });
    }, 60_000);

    it("keeps changes made outside any run on a copy the store moved past as a recovered snapshot, then starts from the newest", async () => {
      const store = storeOf();
      const a = await daemon(store);
      const b = await daemon(store);
      const first = await runOnce(a, "w", { "/shared.txt": "v1\n" });
      await write(a, "w", "/outside.txt", "written outside any run\n"); // unpublished, on a copy of first
      expect(await a.client.workspaces.getWorkspace({ workspace: "w" })).toMatchObject({ copyOf: first.snapshot.id, unpublishedChanges: true });
      const second = await runOnce(b, "w", { "/shared.txt": "v2\n" });
      const next = (await a.client.workspaces.startRun({ workspace: "w" })).run!;
      expect(next.restoredFrom).toBe(second.snapshot.id);
      expect(read(a, "w", "shared.txt")).toBe("v2\n");
      const recovered = (await a.client.workspaces.listSnapshots({ workspace: "w", includeRecovered: true })).snapshots.filter((s) => s.recovered);
      expect(recovered).toHaveLength(1);
      expect(recovered[0]).toMatchObject({ parent: first.snapshot.id, runId: "" }); // written outside any run
      expect(recovered[0]!.recoveredReason).toContain(`another run published ${second.snapshot.id}`);
      // Its content is the copy as it was: first plus the unpublished file.
      const { entries } = await a.client.workspace("w").diffSnapshots(first.snapshot.id, { to: recovered[0]!.id });
      expect(entries.map((e) => e.path)).toEqual(["/outside.txt"]);
      // Not on the main line: LATEST never restores it, ListSnapshots does not show it by default.
      expect((await a.client.workspaces.listSnapshots({ workspace: "w" })).snapshots.map((s) => s.id)).toEqual([second.snapshot.id, first.snapshot.id]);
      await a.client.workspaces.finishRun({ workspace: "w", runId: next.id, snapshot: false });
    }, 60_000);

    it("a daemon restarted on its data dir after another published: the copy is refreshed, a copy still of the newest is used as it is", async () => {
      const store = storeOf();
      const dataDir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-truth-data-")));
      let a = await daemon(store, { dataDir });
      await runOnce(a, "w", { "/x.txt": "1\n" });
      await a.stop(true);
      const b = await daemon(store);
      const published = await runOnce(b, "w", { "/x.txt": "2\n" });
      a = await daemon(store, { dataDir });
      const run = (await a.client.workspaces.startRun({ workspace: "w" })).run!;
      expect(run.restoredFrom).toBe(published.snapshot.id);
      expect(read(a, "w", "x.txt")).toBe("2\n");
      await write(a, "w", "/x.txt", "3\n");
      const mine = (await a.client.workspaces.finishRun({ workspace: "w", runId: run.id })).snapshot!;
      // Nothing moved since: the next run uses the copy as it is.
      const again = (await a.client.workspaces.startRun({ workspace: "w" })).run!;
      expect(again).toMatchObject({ restoredFrom: "", startedFrom: mine.id });
      await a.client.workspaces.finishRun({ workspace: "w", runId: again.id, snapshot: false });
    }, 60_000);
  });
}

describe("a copy a restore was replacing when its daemon died", () => {
  it("holds nobody's work: the next run brings it to the newest without keeping it, and a copy one run behind fetches only what changed", async () => {
    const store = fileStore();
    const dataDir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-truth-data-")));
    let a = await daemon(store, { dataDir });
    const files = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`/f${i}.txt`, `file ${i}\n`]));
    await runOnce(a, "w", files);
    await sleep(100); // past the stat cache's racy window
    const b = await daemon(store);
    const newest = await runOnce(b, "w", { "/f7.txt": "changed by b\n" });
    // A's copy is one run behind: its restore moves only f7.
    const run = (await a.client.workspaces.startRun({ workspace: "w" })).run!;
    expect(run.restoredFrom).toBe(newest.snapshot.id);
    expect(read(a, "w", "f7.txt")).toBe("changed by b\n");
    await a.client.workspaces.finishRun({ workspace: "w", runId: run.id, snapshot: false });
    // Killed part-way through a restore: the record says so, the tree is half of each.
    await a.stop();
    writeFileSync(path.join(dataDir, "copies", "w.json"), JSON.stringify({ snapshot: "", fingerprint: "", run: "", replacing: true }));
    writeFileSync(path.join(a.hostDir("w"), "f1.txt"), "half-applied\n");
    a = await daemon(store, { dataDir });
    expect((await a.client.workspaces.getWorkspace({ workspace: "w" })).unpublishedChanges).toBe(false);
    const next = (await a.client.workspaces.startRun({ workspace: "w" })).run!;
    expect(next.restoredFrom).toBe(newest.snapshot.id);
    expect(read(a, "w", "f1.txt")).toBe("file 1\n");
    const all = (await a.client.workspaces.listSnapshots({ workspace: "w", includeRecovered: true })).snapshots;
    expect(all.filter((s) => s.recovered)).toEqual([]);
    await a.client.workspaces.finishRun({ workspace: "w", runId: next.id, snapshot: false });
  }, 60_000);
});

describe("a bound directory of unknown origin", () => {
  it("is used as it is when it holds exactly the newest snapshot; otherwise kept as a recovered snapshot before the newest is restored", async () => {
    const store = fileStore();
    const a = await daemon(store);
    const published = await runOnce(a, "w", { "/f.txt": "same\n" });
    const same = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-truth-bound-")));
    writeFileSync(path.join(same, "f.txt"), "same\n");
    const other = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-truth-bound-")));
    writeFileSync(path.join(other, "mine.txt"), "an operator's file\n");
    const b = await daemon(store, { binds: { w: same } });
    const run = (await b.client.workspaces.startRun({ workspace: "w" })).run!;
    expect(run).toMatchObject({ restoredFrom: "", startedFrom: published.snapshot.id });
    await b.client.workspaces.finishRun({ workspace: "w", runId: run.id, snapshot: false });
    const c = await daemon(store, { binds: { w: other } });
    const next = (await c.client.workspaces.startRun({ workspace: "w" })).run!;
    expect(next.restoredFrom).toBe(published.snapshot.id);
    expect(readFileSync(path.join(other, "f.txt"), "utf8")).toBe("same\n");
    const [kept] = (await c.client.workspaces.listSnapshots({ workspace: "w", includeRecovered: true })).snapshots.filter((s) => s.recovered);
    expect(kept).toMatchObject({ parent: "", fileCount: 1n });
    expect(kept!.recoveredReason).toContain("a copy of unknown origin");
  }, 60_000);
});

describe("leases (s3://)", () => {
  it("a released lease is overwritten, never deleted, and names its node; GetWorkspace and ListRuns show who holds a workspace", async () => {
    const store = s3Store();
    const a = await daemon(store, { node: "alpha" });
    const b = await daemon(store, { node: "beta" });
    const run = (await a.client.workspaces.startRun({ workspace: "w" })).run!;
    expect(run.node).toBe("alpha");
    await b.client.workspaces.createWorkspace({ workspace: "w" });
    const seen = await b.client.workspaces.getWorkspace({ workspace: "w" });
    expect(seen.activeRun).toMatchObject({ runId: run.id, node: "alpha", local: false });
    expect(seen.activeRun!.leaseExpiresAt).toBeDefined();
    const { runs } = await b.client.workspaces.listRuns({});
    expect(runs.map((r) => [r.workspace, r.runId, r.node, r.local])).toEqual([["w", run.id, "alpha", false]]);
    const refused = await expectError(b.client.workspaces.startRun({ workspace: "w" }), "FAILED_PRECONDITION", "RUN_ACTIVE");
    expect(refused.metadata).toMatchObject({ run_id: run.id, node: "alpha" });
    await a.client.workspaces.finishRun({ workspace: "w", runId: run.id });
    expect((await b.client.workspaces.listRuns({})).runs).toEqual([]);
    await b.client.workspaces.startRun({ workspace: "w" }); // the released lease is taken at once
  }, 60_000);

  it("a daemon killed mid-run and restarted after another took its workspace over does not resume its run: it ends it and keeps its work", async () => {
    const store = s3Store();
    const dataDir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-truth-data-")));
    let a = await daemon(store, { dataDir, node: "alpha" });
    const base = await runOnce(a, "w", { "/base.txt": "base\n" });
    const ghost = (await a.client.workspaces.startRun({ workspace: "w" })).run!;
    await write(a, "w", "/ghost.txt", "work of a run whose daemon died\n");
    a.proc.kill("SIGKILL");
    await new Promise((resolve) => a.proc.once("exit", resolve));
    const b = await daemon(store, { node: "beta" });
    let taken;
    const deadline = Date.now() + TTL_MS + 10_000;
    for (;;) {
      try {
        taken = (await b.client.workspaces.startRun({ workspace: "w" })).run!;
        break;
      } catch (error) {
        if ((error as { reason?: string }).reason !== "RUN_ACTIVE" || Date.now() > deadline) throw error;
        await sleep(200);
      }
    }
    expect(taken.startedFrom).toBe(base.snapshot.id);
    a = await daemon(store, { dataDir, node: "alpha" }); // restarted while B holds the workspace
    await expectError(a.client.workspaces.finishRun({ workspace: "w", runId: ghost.id }), "NOT_FOUND");
    await b.client.workspaces.finishRun({ workspace: "w", runId: taken.id }); // B was never blocked by a ghost
    // A kept the dead run's work (in the background after start-up).
    let kept;
    for (let i = 0; i < 100 && !kept; i++) {
      kept = (await b.client.workspaces.listSnapshots({ workspace: "w", includeRecovered: true })).snapshots.find((s) => s.recovered && s.runId === ghost.id);
      if (!kept) await sleep(100);
    }
    expect(kept).toMatchObject({ parent: base.snapshot.id });
    expect(kept!.recoveredReason).toContain("ended at start-up");
  }, 60_000);

  it("an operator abandons another daemon's stuck run: its lease is broken, its FinishRun publishes nothing and keeps its work", async () => {
    const store = s3Store();
    const a = await daemon(store, { node: "alpha" });
    const b = await daemon(store, { node: "beta" });
    const stuck = (await a.client.workspaces.startRun({ workspace: "w" })).run!;
    await write(a, "w", "/late.txt", "late\n");
    const abandoned = await b.client.workspaces.abandonRun({ workspace: "w", reason: "stuck for an hour" });
    expect(abandoned).toMatchObject({ runId: stuck.id, leaseBroken: true });
    const next = (await b.client.workspaces.startRun({ workspace: "w" })).run!; // free at once
    const refused = await expectError(a.client.workspaces.finishRun({ workspace: "w", runId: stuck.id }), "FAILED_PRECONDITION", "RUN_ACTIVE");
    expect(refused.metadata.recovered_snapshot).toMatch(/^\d{8}T/);
    await b.client.workspaces.finishRun({ workspace: "w", runId: next.id });
    const all = (await b.client.workspaces.listSnapshots({ workspace: "w", includeRecovered: true })).snapshots;
    expect(all.find((s) => s.id === refused.metadata.recovered_snapshot)).toMatchObject({ runId: stuck.id, recovered: true });
    await expectError(b.client.workspaces.abandonRun({ workspace: "w" }), "NOT_FOUND");
  }, 60_000);
});
