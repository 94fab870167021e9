// Changes made behind the daemon's back in a bound workspace appear in its
// journal as `outside`, within a bound this test measures (and prints); the
// daemon's own changes appear once, as its own. With notifications, and with
// the stat scan that replaces them where they are unavailable.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JournalKind, type JournalEntry } from "../../clients/ts/src/index.js";
import { startDaemon, type Daemon } from "./daemon.js";

interface Watching {
  next(): Promise<JournalEntry>;
  notices: string[];
  stop(): void;
}

async function watchLive(d: Daemon, ws: string): Promise<Watching> {
  const controller = new AbortController();
  const notices: string[] = [];
  let live!: () => void;
  const isLive = new Promise<void>((r) => (live = r));
  const iterator = d.client.workspace(ws).watch({ signal: controller.signal, onLive: () => live(), onNotice: (m) => notices.push(m) });
  let pending: Promise<IteratorResult<JournalEntry>> | undefined = iterator.next();
  await isLive;
  return {
    notices,
    next: async () => {
      const result = await (pending ?? iterator.next());
      pending = undefined;
      return result.value as JournalEntry;
    },
    stop: () => controller.abort(),
  };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

describe("outside changes with the kernel's notifications", () => {
  let d: Daemon;
  let dir: string;
  beforeAll(async () => {
    dir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-outside-")));
    d = await startDaemon({ binds: { out: dir } });
  });
  afterAll(async () => {
    await d?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("files written, changed and deleted by another program appear as outside, within the bound measured here", async () => {
    const watch = await watchLive(d, "out");
    const latencies: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      writeFileSync(path.join(dir, `o${i}.txt`), `outside ${i}\n`);
      const entry = await watch.next();
      latencies.push(performance.now() - started);
      expect(entry).toMatchObject({ path: `/o${i}.txt`, kind: JournalKind.CREATED, outside: true });
      expect(entry.actor?.rpc ?? "").toBe("");
    }
    writeFileSync(path.join(dir, "o0.txt"), "changed\n");
    expect(await watch.next()).toMatchObject({ path: "/o0.txt", kind: JournalKind.MODIFIED, outside: true });
    rmSync(path.join(dir, "o1.txt"));
    expect(await watch.next()).toMatchObject({ path: "/o1.txt", kind: JournalKind.DELETED, outside: true });
    // A directory made with a file in it at once: the file is found by a look inside.
    mkdirSync(path.join(dir, "made"));
    writeFileSync(path.join(dir, "made", "inner.txt"), "x");
    const made = [await watch.next(), await watch.next()];
    expect(made.map((e) => [e.path, e.kind])).toEqual([
      ["/made", JournalKind.MADE_DIRECTORY],
      ["/made/inner.txt", JournalKind.CREATED],
    ]);
    watch.stop();
    console.log(`outside-change latency over 20 writes: p50 ${percentile(latencies, 50).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms (settling ${100} ms included)`);
    expect(Math.max(...latencies)).toBeLessThan(5_000);
  }, 120_000);

  it("the daemon's own changes in a bound workspace appear once, as its own", async () => {
    const w = d.client.workspace("out");
    const { lastCursor } = await (async () => {
      let last = 0n;
      for await (const m of d.client.journal.getJournal({ workspace: "out" })) last = m.lastCursor;
      return { lastCursor: last };
    })();
    await w.writeText("/own.txt", "mine\n");
    await w.mkdir("/owndir/sub");
    await w.writeText("/owndir/sub/f.txt", "f\n");
    await w.move("/owndir", "/moved");
    await w.delete("/moved", { recursive: true });
    await w.delete("/own.txt");
    // Longer than the settling time and the kernel's delivery: any echo would be journaled by now.
    await new Promise((r) => setTimeout(r, 1500));
    const entries = await w.journal({ afterCursor: lastCursor });
    expect(entries.map((e) => [e.path, e.outside])).toEqual([
      ["/own.txt", false],
      ["/owndir/sub", false],
      ["/owndir/sub/f.txt", false],
      ["/moved", false],
      ["/moved", false],
      ["/own.txt", false],
    ]);
  });
});

describe("outside changes by a stat scan", () => {
  let d: Daemon;
  let dir: string;
  beforeAll(async () => {
    dir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-outside-scan-")));
    writeFileSync(path.join(dir, "there.txt"), "before\n");
    d = await startDaemon({ binds: { scanned: dir }, args: ["--outside-watch", "scan", "--outside-scan-ms", "100"] });
  });
  afterAll(async () => {
    await d?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("says so to each watcher, and finds what changed", async () => {
    const watch = await watchLive(d, "scanned");
    writeFileSync(path.join(dir, "new.txt"), "x");
    writeFileSync(path.join(dir, "there.txt"), "after, longer\n");
    const seen = [await watch.next(), await watch.next()].sort((a, b) => a.path.localeCompare(b.path));
    expect(seen.map((e) => [e.path, e.kind, e.outside])).toEqual([
      ["/new.txt", JournalKind.CREATED, true],
      ["/there.txt", JournalKind.MODIFIED, true],
    ]);
    expect(watch.notices.join("\n")).toMatch(/stat scan every 100 ms/);
    await d.client.workspace("scanned").writeText("/daemon.txt", "own");
    rmSync(path.join(dir, "new.txt"));
    const next = [await watch.next(), await watch.next()];
    watch.stop();
    expect(next.map((e) => [e.path, e.kind, e.outside])).toEqual([
      ["/daemon.txt", JournalKind.CREATED, false],
      ["/new.txt", JournalKind.DELETED, true],
    ]);
  });
});
