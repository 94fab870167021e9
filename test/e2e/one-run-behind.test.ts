// A copy one run behind is brought to the newest snapshot in place, from one
// walk of its tree: the restore plans from the walk that told the copy's
// state when no call changed the (managed) tree since, and tells the
// restored tree's fingerprint from what the merge touched. Each shortcut
// against what would make it wrong: a bound copy changed while its daemon was
// down, calls racing the StartRun, and SIGKILLs during it, each followed by
// a restart. In every case the copy is never taken for a snapshot it does
// not hold, and no work is dropped silently.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ageTree, mtimes, tree } from "../support/trees.js";
import { ensureBuilt, startDaemon, type Daemon } from "./daemon.js";

const daemons: Daemon[] = [];
const dirs: string[] = [];

beforeAll(() => ensureBuilt(), 120_000);

afterAll(async () => {
  for (const d of daemons) await d.stop().catch(() => undefined);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), prefix)));
  dirs.push(dir);
  return dir;
}

async function daemon(store: string, options: { dataDir?: string; binds?: Record<string, string> } = {}): Promise<Daemon> {
  const d = await startDaemon({ args: ["--store", store], dataDir: options.dataDir, binds: options.binds });
  daemons.push(d);
  return d;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const write = (d: Daemon, ws: string, p: string, text: string) => d.client.files.write({ workspace: ws, path: p, body: { case: "content", value: text } });

/** `count` files in a few directories (so that a one-run-behind merge goes through some and leaves others alone). */
function plant(dir: string, count: number): void {
  for (let i = 0; i < count; i++) {
    mkdirSync(path.join(dir, `d${i % 10}`), { recursive: true });
    writeFileSync(path.join(dir, `d${i % 10}`, `f${i}.txt`), `file ${i}\n`);
  }
}

/** A run of the publisher on its bound directory: `change` edits it behind its back; the snapshot published. */
async function publish(p: Daemon, change: () => void): Promise<string> {
  const run = (await p.client.workspaces.startRun({ workspace: "w" })).run!;
  change();
  return (await p.client.workspaces.finishRun({ workspace: "w", runId: run.id })).snapshot!.id;
}

async function recovered(d: Daemon): Promise<string[]> {
  return (await d.client.workspaces.listSnapshots({ workspace: "w", includeRecovered: true })).snapshots.filter((s) => s.recovered).map((s) => s.id);
}

describe("a copy one run behind", () => {
  it("bound, changed behind the daemon's back while it was down: the change is kept, the newest restored, and the next run takes the copy as it is", async () => {
    const store = `file://${tempDir("ftd-behind-store-")}`;
    const bound = tempDir("ftd-behind-bound-");
    plant(bound, 60);
    const dataDir = tempDir("ftd-behind-data-");
    let a = await daemon(store, { dataDir, binds: { w: bound } });
    const first = await publish(a, () => undefined);
    await a.stop(true);
    await sleep(100); // past the stat cache's racy window
    const published = tempDir("ftd-behind-pub-");
    plant(published, 60);
    const p = await daemon(store, { binds: { w: published } });
    // Its entries' mtimes all in the past: the copy's differ, and the restore gives it these.
    const newest = await publish(p, () => {
      writeFileSync(path.join(published, "d7", "f7.txt"), "changed by the publisher\n");
      ageTree(published);
    });
    // While A is down: a file rewritten to the same size (its ctime moves), one added in a directory the restore goes through.
    writeFileSync(path.join(bound, "d3", "f3.txt"), "file X\n");
    writeFileSync(path.join(bound, "d7", "mine.txt"), "an operator's file\n");
    a = await daemon(store, { dataDir, binds: { w: bound } });
    expect(await a.client.workspaces.getWorkspace({ workspace: "w" })).toMatchObject({ copyOf: first, unpublishedChanges: true });
    const run = (await a.client.workspaces.startRun({ workspace: "w" })).run!;
    expect(run.restoredFrom).toBe(newest);
    expect(tree(bound)).toEqual(tree(published));
    expect(mtimes(bound)).toEqual(mtimes(published));
    const [kept] = await recovered(a);
    const { entries } = await a.client.workspace("w").diffSnapshots(first, { to: kept! });
    expect(entries.map((e) => e.path).sort()).toEqual(["/d3/f3.txt", "/d7/mine.txt"]);
    await a.client.workspaces.finishRun({ workspace: "w", runId: run.id, snapshot: false });
    // The restored tree's fingerprint, told without a walk, is the one a walk takes.
    expect(await a.client.workspaces.getWorkspace({ workspace: "w" })).toMatchObject({ copyOf: newest, unpublishedChanges: false });
    const next = (await a.client.workspaces.startRun({ workspace: "w" })).run!;
    expect(next).toMatchObject({ restoredFrom: "", startedFrom: newest });
    await a.client.workspaces.finishRun({ workspace: "w", runId: next.id, snapshot: false });
    expect(await recovered(a)).toEqual([kept]);
  }, 90_000);

  it("managed, with writes racing its StartRun: a write the restore did not undo leaves the copy changed, never taken for the newest", async () => {
    const store = `file://${tempDir("ftd-behind-store-")}`;
    const published = tempDir("ftd-behind-pub-");
    plant(published, 2000);
    const p = await daemon(store, { binds: { w: published } });
    await publish(p, () => undefined);
    const a = await daemon(store);
    const ROUNDS = 9;
    let whole = 0; // ms, of the first round's StartRun, raced by nothing
    const differed: number[] = [];
    let refused = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const started = (await a.client.workspaces.startRun({ workspace: "w" })).run!;
      await a.client.workspaces.finishRun({ workspace: "w", runId: started.id, snapshot: false });
      await sleep(100);
      const newest = await publish(p, () => {
        for (let i = round; i < 2000; i += 10) writeFileSync(path.join(published, `d${i % 10}`, `f${i}.txt`), `file ${i}, round ${round}\n`);
      });
      const begun = performance.now();
      let done = false;
      const starting = a.client.workspaces.startRun({ workspace: "w" }).finally(() => (done = true));
      // Writes from the StartRun's start until a moment spread over its length: the later rounds' last writes land later
      // (before its walk, during its fetch, during its merge, after it); some are undone, some stay.
      const until = begun + (whole * round) / (ROUNDS - 1);
      // A write may be refused (CONTENT_CHANGED: the restore replaced its file under it); what the tree holds is checked either way.
      const racing = (async () => {
        for (let n = 0; round > 0 && !done && performance.now() < until; n++) {
          await write(a, "w", `/d${n % 10}/racer-${round}-${n}.txt`, `racer ${n}\n`).catch(() => refused++);
          if (n % 3 === 0) await write(a, "w", `/d${n % 10}/f${n % 2000}.txt`, `overwritten by racer ${n}\n`).catch(() => refused++);
        }
      })();
      const run = (await starting).run!;
      await racing;
      if (round === 0) whole = performance.now() - begun;
      expect(run.restoredFrom).toBe(newest);
      await a.client.workspaces.finishRun({ workspace: "w", runId: run.id, snapshot: false });
      const same = JSON.stringify(tree(a.hostDir("w"))) === JSON.stringify(tree(published));
      const shown = await a.client.workspaces.getWorkspace({ workspace: "w" });
      expect(shown.copyOf).toBe(newest);
      if (!same) {
        expect(shown.unpublishedChanges, `round ${round}: the tree differs from ${newest}`).toBe(true);
        differed.push(round);
      }
    }
    // How the races fell (not asserted: timing on a shared machine), for the record.
    console.log(`racing writes: a StartRun of ${Math.round(whole)} ms; racers outlived the restore in rounds ${differed.join(", ") || "none"}; ${refused} writes refused`);
  }, 300_000);

  it("managed, SIGKILLed during its StartRun: after a restart the next run starts from the newest, the tree exactly it, nothing kept", async () => {
    const store = `file://${tempDir("ftd-behind-store-")}`;
    const published = tempDir("ftd-behind-pub-");
    plant(published, 2000);
    const p = await daemon(store, { binds: { w: published } });
    await publish(p, () => undefined);
    const dataDir = tempDir("ftd-behind-data-");
    let a = await daemon(store, { dataDir });
    const first = (await a.client.workspaces.startRun({ workspace: "w" })).run!;
    await a.client.workspaces.finishRun({ workspace: "w", runId: first.id, snapshot: false });
    const outcomes: string[] = [];
    const ROUNDS = 7;
    let whole = 0; // ms, of the first round's StartRun, not killed
    for (let round = 0; round < ROUNDS; round++) {
      await sleep(100);
      const newest = await publish(p, () => {
        for (let i = round; i < 2000; i += 10) writeFileSync(path.join(published, `d${i % 10}`, `f${i}.txt`), `file ${i}, round ${round}\n`);
        writeFileSync(path.join(published, `d${round}`, `new-${round}.txt`), "added\n");
      });
      const started = performance.now();
      const starting = a.client.workspaces.startRun({ workspace: "w" }).then(
        () => "answered",
        () => "cut",
      );
      if (round === 0) {
        await starting;
        whole = performance.now() - started;
      } else {
        // Spread over a StartRun's length (a walk of 2,000 files, a fetch of 200, the merge): the later rounds land later.
        await sleep((whole * round) / (ROUNDS - 1));
      }
      a.proc.kill("SIGKILL");
      await new Promise((resolve) => a.proc.once("exit", resolve));
      outcomes.push(`${await starting} after ${Math.round(performance.now() - started)} ms`);
      a.client.close();
      a = await daemon(store, { dataDir });
      // A run the kill caught once it was recorded is resumed (it started from the newest): ended here.
      const active = (await a.client.workspaces.getWorkspace({ workspace: "w" })).activeRun;
      if (active) await a.client.workspaces.finishRun({ workspace: "w", runId: active.runId, snapshot: false });
      const run = (await a.client.workspaces.startRun({ workspace: "w" })).run!;
      expect(run.startedFrom).toBe(newest);
      expect(tree(a.hostDir("w"))).toEqual(tree(published));
      await a.client.workspaces.finishRun({ workspace: "w", runId: run.id, snapshot: false });
      expect(await a.client.workspaces.getWorkspace({ workspace: "w" })).toMatchObject({ copyOf: newest, unpublishedChanges: false });
      expect(await recovered(a)).toEqual([]);
      expect(readFileSync(path.join(a.hostDir("w"), `d${round}`, `new-${round}.txt`), "utf8")).toBe("added\n");
    }
    // Where the kills fell (not asserted: timing on a shared machine), for the record.
    console.log(`one-run-behind kill loop: ${outcomes.join("; ")}`);
  }, 300_000);
});
