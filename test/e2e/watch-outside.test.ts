// Changes made behind the daemon's back in a bound workspace appear in its
// journal as `outside`, within a bound this test measures (and prints); the
// daemon's own changes appear once, as its own. With notifications, and with
// the stat scan that replaces them where they are unavailable.
import { execFileSync } from "node:child_process";
import { appendFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { JournalKind, WriteMode, type JournalEntry } from "../../clients/ts/src/index.js";
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
      ["/owndir", false],
      ["/owndir/sub", false],
      ["/owndir/sub/f.txt", false],
      ["/moved", false],
      ["/moved", false],
      ["/own.txt", false],
    ]);
  });
  it("the daemon rewriting files many times a second, and making directories on its writes' way: nothing journaled as outside", async () => {
    // A look at a path while the daemon's own write of it is under way (placed, its record not in yet) saw a version the journal did not have.
    const w = d.client.workspace("out");
    const cursor = (await w.journal()).at(-1)?.cursor ?? 0n;
    const until = Date.now() + 5000;
    let writes = 0;
    const rewriters = [0, 1].map(async (k) => {
      while (Date.now() < until) await w.writeText(`/hot${k}.txt`, `version ${writes++}\n`);
    });
    const maker = (async () => {
      for (let n = 0; Date.now() < until; n++, writes++) await w.writeText(`/hot-dirs/d${n}/f.txt`, `${n}\n`);
    })();
    await Promise.all([...rewriters, maker]);
    await new Promise((r) => setTimeout(r, 1500));
    const entries = await w.journal({ afterCursor: cursor });
    console.log(`hot rewrites: ${writes} writes, ${entries.length} entries`);
    expect(entries.filter((e) => e.outside).map((e) => `${e.path} ${e.kind}`)).toEqual([]);
    expect(entries.length).toBeGreaterThanOrEqual(writes);
  }, 60_000);

  it("writes, a move and a delete through a link to a directory, a write through a link to a file: journaled once, by the path asked, none as outside", async () => {
    mkdirSync(path.join(dir, "real"));
    symlinkSync("real", path.join(dir, "linkdir"));
    writeFileSync(path.join(dir, "target.txt"), "before\n");
    symlinkSync("target.txt", path.join(dir, "alias.txt"));
    const w = d.client.workspace("out");
    // What this program made is journaled as outside first; the daemon's writes come after that cursor.
    await new Promise((r) => setTimeout(r, 1000));
    const cursor = (await w.journal()).at(-1)!.cursor;
    await w.writeText("/linkdir/f.txt", "through the link to a directory\n");
    await w.writeText("/alias.txt", "through the link to a file\n");
    await w.writeText("/linkdir/f.txt", "again\n");
    await new Promise((r) => setTimeout(r, 500));
    await w.move("/linkdir/f.txt", "/linkdir/g.txt");
    await new Promise((r) => setTimeout(r, 500));
    await w.delete("/linkdir/g.txt");
    await new Promise((r) => setTimeout(r, 1500));
    const entries = await w.journal({ afterCursor: cursor });
    expect(entries.map((e) => [e.path, e.kind, e.outside])).toEqual([
      ["/linkdir/f.txt", JournalKind.CREATED, false],
      ["/alias.txt", JournalKind.MODIFIED, false],
      ["/linkdir/f.txt", JournalKind.MODIFIED, false],
      ["/linkdir/g.txt", JournalKind.MOVED, false],
      ["/linkdir/g.txt", JournalKind.DELETED, false],
    ]);
  });

  it("a MakeDir, a Move and an ApplyPatch that make 150 directories each: one entry each, none outside", async () => {
    // Their records come after the change returns: the outside watcher waits for them (Workspace.recorded).
    const w = d.client.workspace("out");
    const cursor = (await w.journal()).at(-1)?.cursor ?? 0n;
    const chain = (p: string) => Array.from({ length: 150 }, (_, k) => `${p}${k}`).join("/");
    await w.mkdir(`/deep-mk/${chain("a")}`);
    await w.writeText("/deep-mv.txt", "m");
    await w.move("/deep-mv.txt", `/deep-mv/${chain("b")}/m.txt`, { createDirs: true });
    await w.applyPatch(`*** Begin Patch\n*** Add File: deep-ap/${chain("c")}/p.txt\n+patched\n*** End Patch\n`);
    await new Promise((r) => setTimeout(r, 2000));
    const entries = await w.journal({ afterCursor: cursor });
    expect(entries.filter((e) => e.outside).length).toBe(0);
    expect(new Set(entries.map((e) => e.path)).size).toBe(entries.length);
    expect(entries.length).toBe(1 + 150 + 1 + 151 + 1 + 151 + 1);
  }, 60_000);

  it("the directories a failed write leaves (another call overlapped it, so they stay) are journaled as its own", async () => {
    const w = d.client.workspace("out");
    const cursor = (await w.journal()).at(-1)?.cursor ?? 0n;
    // Another call writing all the time: a failed write's directories are taken back only when no other call overlapped it.
    let stop = false;
    const busy = (async () => {
      while (!stop) await w.writeBytes("/busy.bin", new Uint8Array(3 << 20).fill(66));
    })();
    let left = -1;
    for (let i = 0; i < 20 && left < 0; i++) {
      await expect(w.writeText(`/n${i}/sub/f.txt`, "x", { mode: WriteMode.REPLACE_ONLY, createDirs: true })).rejects.toThrow(/does not exist/);
      if (existsSync(path.join(dir, `n${i}`))) left = i;
    }
    stop = true;
    await busy;
    expect(left).toBeGreaterThanOrEqual(0);
    // What stayed: /nI, and /nI/sub unless it was taken back before the overlap began.
    const stayed = [`/n${left}`, ...(existsSync(path.join(dir, `n${left}`, "sub")) ? [`/n${left}/sub`] : [])];
    await new Promise((r) => setTimeout(r, 1500));
    const entries = (await w.journal({ afterCursor: cursor })).filter((e) => `${e.path}/`.startsWith(`/n${left}/`));
    expect(entries.map((e) => [e.path, e.kind, e.outside, e.actor?.rpc])).toEqual(stayed.map((p) => [p, JournalKind.MADE_DIRECTORY, false, "Write"]));
  }, 60_000);

  it.each(["out", "made-here"])("the directories a call makes on its way appear as its own, parents first (%s)", async (ws) => {
    // "out" is bound (the kernel's notifications of the directories must be told apart as the daemon's), "made-here" managed.
    if (ws === "made-here") await d.client.workspaces.createWorkspace({ workspace: ws });
    const w = d.client.workspace(ws);
    await w.writeText("/seed.txt", "seed\n");
    const cursor = (await w.journal()).at(-1)!.cursor;
    await w.writeText("/w1/w2/f.txt", "f\n");
    await w.mkdir("/m1/m2/m3");
    await w.move("/seed.txt", "/v1/v2/seed.txt");
    await w.upload(
      (async function* () {
        yield Buffer.from("uploaded\n");
      })(),
      "/u1/u.txt",
    );
    await w.applyPatch("*** Begin Patch\n*** Add File: p1/p2/p.txt\n+patched\n*** End Patch\n");
    await w.writeText("/w1/w2/g.txt", "no directory made\n");
    // Longer than the settling time and the kernel's delivery: any echo would be journaled by now.
    await new Promise((r) => setTimeout(r, 1500));
    const entries = await w.journal({ afterCursor: cursor });
    expect(entries.map((e) => [e.path, e.kind, e.outside, e.actor?.rpc])).toEqual([
      ["/w1", JournalKind.MADE_DIRECTORY, false, "Write"],
      ["/w1/w2", JournalKind.MADE_DIRECTORY, false, "Write"],
      ["/w1/w2/f.txt", JournalKind.CREATED, false, "Write"],
      ["/m1", JournalKind.MADE_DIRECTORY, false, "MakeDir"],
      ["/m1/m2", JournalKind.MADE_DIRECTORY, false, "MakeDir"],
      ["/m1/m2/m3", JournalKind.MADE_DIRECTORY, false, "MakeDir"],
      ["/v1", JournalKind.MADE_DIRECTORY, false, "Move"],
      ["/v1/v2", JournalKind.MADE_DIRECTORY, false, "Move"],
      ["/v1/v2/seed.txt", JournalKind.MOVED, false, "Move"],
      ["/u1", JournalKind.MADE_DIRECTORY, false, "Upload"],
      ["/u1/u.txt", JournalKind.CREATED, false, "Upload"],
      ["/p1", JournalKind.MADE_DIRECTORY, false, "ApplyPatch"],
      ["/p1/p2", JournalKind.MADE_DIRECTORY, false, "ApplyPatch"],
      ["/p1/p2/p.txt", JournalKind.CREATED, false, "ApplyPatch"],
      ["/w1/w2/g.txt", JournalKind.CREATED, false, "Write"],
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

describe.each([
  ["notify", []],
  ["scan", ["--outside-scan-ms", "100"]],
])("outside changes made while the daemon was down (%s)", (mode, extra) => {
  let dir: string;
  let dataDir: string;
  let d: Daemon | undefined;
  const start = () => startDaemon({ dataDir, binds: { down: dir }, args: ["--outside-watch", mode, ...extra] });
  const entriesAfter = async (cursor: bigint) => (await d!.client.workspace("down").journal({ afterCursor: cursor })).map((e) => [e.path, e.kind, e.outside]);
  const lastCursor = async () => {
    const entries = await d!.client.workspace("down").journal();
    return entries.length === 0 ? 0n : entries[entries.length - 1]!.cursor;
  };
  const killed = async () => {
    d!.proc.kill("SIGKILL");
    await new Promise((resolve) => (d!.proc.signalCode !== null ? resolve(null) : d!.proc.once("exit", resolve)));
  };
  const byPath = (a: unknown[], b: unknown[]) => String(a[0]).localeCompare(String(b[0]));
  beforeAll(() => {
    dir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-outside-down-")));
    dataDir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-outside-down-data-")));
    for (const name of ["keep.txt", "change.txt", "gone.txt", "from.txt"]) writeFileSync(path.join(dir, name), `${name}\n`);
    mkdirSync(path.join(dir, "sub"));
    writeFileSync(path.join(dir, "sub", "inner.txt"), "inner\n");
  });
  afterAll(async () => {
    await d?.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("after a stop: what was changed, made, deleted and moved meanwhile appears as outside, from the old cursor, once", async () => {
    d = await start();
    await d.client.workspace("down").writeText("/own.txt", "the daemon's\n");
    const cursor = await lastCursor();
    await d.stop();
    writeFileSync(path.join(dir, "change.txt"), "changed while down\n");
    writeFileSync(path.join(dir, "new.txt"), "made while down\n");
    rmSync(path.join(dir, "gone.txt"));
    renameSync(path.join(dir, "from.txt"), path.join(dir, "to.txt"));
    mkdirSync(path.join(dir, "newdir"));
    writeFileSync(path.join(dir, "newdir", "f.txt"), "f\n");
    rmSync(path.join(dir, "sub"), { recursive: true });
    d = await start();
    const expected = [
      ["/change.txt", JournalKind.MODIFIED, true],
      ["/from.txt", JournalKind.DELETED, true],
      ["/gone.txt", JournalKind.DELETED, true],
      ["/new.txt", JournalKind.CREATED, true],
      ["/newdir", JournalKind.MADE_DIRECTORY, true],
      ["/newdir/f.txt", JournalKind.CREATED, true],
      ["/sub", JournalKind.DELETED, true],
      ["/sub/inner.txt", JournalKind.DELETED, true],
      ["/to.txt", JournalKind.CREATED, true],
    ];
    const controller = new AbortController();
    const seen: unknown[][] = [];
    for await (const entry of d.client.workspace("down").watch({ since: cursor, signal: controller.signal })) {
      seen.push([entry.path, entry.kind, entry.outside]);
      if (seen.length === expected.length) break;
    }
    controller.abort();
    expect(seen.sort(byPath)).toEqual(expected);
    // Nothing else: the daemon's own write is not told again.
    expect((await entriesAfter(cursor)).sort(byPath)).toEqual(expected);
  });

  it("after a SIGKILL too, and what was journaled before it is not told again", async () => {
    const w = d!.client.workspace("down");
    await w.writeText("/own2.txt", "the daemon's, again\n");
    writeFileSync(path.join(dir, "live.txt"), "seen while the daemon ran\n");
    // Journaled live before the kill.
    for (let tries = 0; !(await w.journal()).some((e) => e.path === "/live.txt"); tries++) {
      expect(tries).toBeLessThan(100);
      await new Promise((r) => setTimeout(r, 100));
    }
    const cursor = await lastCursor();
    await killed();
    writeFileSync(path.join(dir, "keep.txt"), "changed while killed\n");
    rmSync(path.join(dir, "new.txt"));
    d = await start();
    expect((await entriesAfter(cursor)).sort(byPath)).toEqual([
      ["/keep.txt", JournalKind.MODIFIED, true],
      ["/new.txt", JournalKind.DELETED, true],
    ]);
  });

  it("without the last daemon's listing, each watcher is told that what changed meanwhile could not be determined", async () => {
    await killed();
    rmSync(path.join(dataDir, "journal", "down", "outside-listing.json"));
    d = await start();
    const controller = new AbortController();
    const notices: string[] = [];
    const watching = d.client.workspace("down").watch({ signal: controller.signal, onNotice: (message) => notices.push(message) });
    const ended = watching.next().catch(() => undefined);
    // The daemon may tell other start-up conditions first, each a notice of its own: wait for this one.
    const told = () => notices.some((n) => /what changed in workspace down while no daemon ran could not be determined/.test(n));
    for (let tries = 0; !told(); tries++) {
      expect(tries, `notices so far: ${notices.join(" | ")}`).toBeLessThan(200);
      await new Promise((r) => setTimeout(r, 50));
    }
    controller.abort();
    await ended;
  });
});

describe("changes the kernel's notifications miss, found by the verifying scan", () => {
  let d: Daemon;
  let dir: string;
  let elsewhere: string;
  beforeAll(async () => {
    dir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-outside-verify-")));
    elsewhere = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-outside-verify-link-")));
    writeFileSync(path.join(dir, "linked.txt"), "before\n");
    mkdirSync(path.join(dir, "keep"));
    writeFileSync(path.join(dir, "keep", "k.txt"), "k\n");
    // A second name outside the workspace: a write through it is told to that directory only.
    linkSync(path.join(dir, "linked.txt"), path.join(elsewhere, "alias.txt"));
    d = await startDaemon({ binds: { verified: dir }, args: ["--outside-verify-ms", process.env.VMS ?? "300"] });
  });
  afterAll(async () => {
    await d?.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(elsewhere, { recursive: true, force: true });
  });

  it("a write through a hard link from outside the workspace is journaled as outside, once, and each watcher is told", async () => {
    const watch = await watchLive(d, "verified");
    appendFileSync(path.join(elsewhere, "alias.txt"), "written through the other name\n");
    expect(await watch.next()).toMatchObject({ path: "/linked.txt", kind: JournalKind.MODIFIED, outside: true });
    // Told after the entry is journaled: the stream is read on (a notice is no entry) until it comes.
    const reading = watch.next().catch(() => undefined);
    for (let tries = 0; !/notifications missed 1 changes to workspace verified/.test(watch.notices.join("\n")); tries++) {
      expect(tries, `notices so far: ${watch.notices.join(" | ")}`).toBeLessThan(100);
      await new Promise((r) => setTimeout(r, 50));
    }
    // Several verifying scans later: told once.
    await new Promise((r) => setTimeout(r, 1500));
    watch.stop();
    await reading;
    const told = (await d.client.workspace("verified").journal()).filter((e) => e.path === "/linked.txt");
    expect(told.map((e) => [e.kind, e.outside])).toEqual([[JournalKind.MODIFIED, true]]);
  });

  it("journals nothing again of what the daemon changed or the notifications told, across verifying scans", async () => {
    const w = d.client.workspace("verified");
    const entries = await w.journal();
    const cursor = entries.at(-1)?.cursor ?? 0n;
    // The daemon's: files, a tree moved and then deleted whole.
    await w.writeText("/own.txt", "mine\n");
    await w.mkdir("/tree/sub");
    await w.writeText("/tree/sub/f.txt", "f\n");
    await w.move("/tree", "/moved");
    await w.delete("/moved", { recursive: true });
    // Told by the notifications: a file, a directory with a file, and a directory deleted with what it held.
    writeFileSync(path.join(dir, "out.txt"), "outside\n");
    mkdirSync(path.join(dir, "made"));
    writeFileSync(path.join(dir, "made", "in.txt"), "in\n");
    rmSync(path.join(dir, "keep"), { recursive: true });
    // Longer than several verifying scans (every 300 ms) and the settling of each.
    await new Promise((r) => setTimeout(r, 2500));
    const after = (await w.journal({ afterCursor: cursor })).map((e) => [e.path, e.kind, e.outside]);
    expect(after.filter((e) => !e[2])).toEqual([
      ["/own.txt", JournalKind.CREATED, false],
      ["/tree", JournalKind.MADE_DIRECTORY, false],
      ["/tree/sub", JournalKind.MADE_DIRECTORY, false],
      ["/tree/sub/f.txt", JournalKind.CREATED, false],
      ["/moved", JournalKind.MOVED, false],
      ["/moved", JournalKind.DELETED, false],
    ]);
    expect(after.filter((e) => e[2]).sort((a, b) => String(a[0]).localeCompare(String(b[0])))).toEqual([
      ["/keep", JournalKind.DELETED, true],
      ["/keep/k.txt", JournalKind.DELETED, true],
      ["/made", JournalKind.MADE_DIRECTORY, true],
      ["/made/in.txt", JournalKind.CREATED, true],
      ["/out.txt", JournalKind.CREATED, true],
    ]);
  });
});

describe("verifying scans tell nothing twice and nothing as missed that was not", () => {
  let d: Daemon | undefined;
  let dir: string;
  afterEach(async () => {
    await d?.stop();
    d = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it("another program writing steadily, every change told by the notifications: no notice, no change told twice", async () => {
    dir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-verify-steady-")));
    d = await startDaemon({ binds: { ws: dir }, args: ["--outside-verify-ms", "200"] });
    const watch = await watchLive(d, "ws");
    const reading = watch.next().catch(() => undefined);
    const until = Date.now() + 3000;
    for (let i = 0; Date.now() < until; i++) {
      writeFileSync(path.join(dir, `f${i}.txt`), `${i}\n`);
      await sleep(10);
    }
    await sleep(1500);
    watch.stop();
    await reading;
    // A change told twice is one state of a path journaled twice. (A writer stalled between its create and its write,
    // on a loaded machine, is rightly told as two changes: the empty file, then its content.)
    const changes = (await d.client.workspace("ws").journal()).map((e) => `${e.path} ${e.versionAfter}`);
    expect({ twice: changes.filter((c, i) => changes.indexOf(c) !== i), notices: watch.notices }).toEqual({ twice: [], notices: [] });
  }, 60_000);

  it("the daemon writing through a link to a directory of the workspace: no deletion told for the path it wrote by, no notice", async () => {
    dir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-verify-link-")));
    mkdirSync(path.join(dir, "real"));
    symlinkSync("real", path.join(dir, "link"));
    d = await startDaemon({ binds: { ws: dir }, args: ["--outside-verify-ms", "300"] });
    const watch = await watchLive(d, "ws");
    const reading = watch.next().catch(() => undefined);
    await d.client.workspace("ws").writeText("/link/f.txt", "through the link\n");
    await sleep(2000);
    watch.stop();
    await reading;
    const deleted = (await d.client.workspace("ws").journal()).filter((e) => e.kind === JournalKind.DELETED);
    expect({ deleted, notices: watch.notices }).toEqual({ deleted: [], notices: [] });
  }, 60_000);

  it.each([
    ["scan", ["--outside-watch", "scan", "--outside-scan-ms", "100"]],
    ["notify", ["--outside-verify-ms", "300"]],
  ])("(%s) a file deleted by another program, under a directory the daemon deleted and an import made again, is journaled", async (_mode, args) => {
    dir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-verify-again-")));
    const tarDir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-verify-again-tar-")));
    mkdirSync(path.join(tarDir, "pkg"));
    writeFileSync(path.join(tarDir, "pkg", "m0.txt"), "member\n");
    execFileSync("tar", ["-C", tarDir, "-cf", path.join(tarDir, "a.tar"), "pkg"]);
    mkdirSync(path.join(dir, "d"));
    writeFileSync(path.join(dir, "d", "old.txt"), "old\n");
    d = await startDaemon({ binds: { ws: dir }, args });
    const w = d.client.workspace("ws");
    await sleep(500);
    await w.delete("/d", { recursive: true });
    await w.importArchive(path.join(tarDir, "a.tar"), { path: "/d" });
    rmSync(tarDir, { recursive: true, force: true });
    // Past the 10 s for which what the daemon did to a tree hides it.
    await sleep(11_000);
    rmSync(path.join(dir, "d", "pkg", "m0.txt"));
    await sleep(2000);
    const told = (await w.journal()).filter((e) => e.outside).map((e) => [e.path, e.kind]);
    expect(told).toEqual([["/d/pkg/m0.txt", JournalKind.DELETED]]);
  }, 60_000);
});

describe.each([
  ["notify", ["--outside-verify-ms", "300"]],
  ["scan", ["--outside-watch", "scan", "--outside-scan-ms", "100"]],
])("whole trees the daemon changes, with a verifying scan (%s)", (_mode, args) => {
  let d: Daemon | undefined;
  let dir = "";
  afterEach(async () => {
    await d?.stop();
    d = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  // Through a link the kernel (and a scan) tells of the tree by the target's paths; without, a scan saw each
  // directory the daemon made as made again once files went in (its times change with its entries).
  it.each(["/linkdir", ""])("a tree written, moved and deleted, and archives imported into new directories (through '%s'): nothing outside", async (via) => {
    dir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-trees-")));
    mkdirSync(path.join(dir, "real"));
    symlinkSync("real", path.join(dir, "linkdir"));
    const tarDir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-trees-tar-")));
    mkdirSync(path.join(tarDir, "pkg"));
    writeFileSync(path.join(tarDir, "pkg", "m0.txt"), "member\n");
    execFileSync("tar", ["-C", tarDir, "-cf", path.join(tarDir, "a.tar"), "pkg"]);
    d = await startDaemon({ binds: { ws: dir }, args });
    const w = d.client.workspace("ws");
    await sleep(1000);
    const cursor = (await w.journal()).at(-1)?.cursor ?? 0n;
    for (let i = 0; i < 5; i++) await w.writeText(`${via}/tree/sub${i}/f${i}.txt`, `${i}\n`);
    await sleep(1000); // scans between the steps
    await w.move(`${via}/tree`, `${via}/tree2`);
    await sleep(1000);
    await w.delete(`${via}/tree2`, { recursive: true });
    await sleep(1000);
    await w.importArchive(path.join(tarDir, "a.tar"), { path: `${via}/imp` });
    await sleep(1000);
    await w.importArchive(path.join(tarDir, "a.tar"), { path: `${via}/imp` });
    await w.importArchive(path.join(tarDir, "a.tar"), { path: `${via}/new/deep/imp` });
    rmSync(tarDir, { recursive: true, force: true });
    await sleep(2000);
    const entries = await w.journal({ afterCursor: cursor });
    expect(entries.filter((e) => e.outside).map((e) => `${e.path} ${e.kind}`)).toEqual([]);
    // The import's parents are its own, before its entry (through the link: where they were made).
    const at = via === "" ? "" : "/real";
    expect(entries.slice(-3).map((e) => [e.path, e.kind, e.actor?.rpc])).toEqual([
      [`${at}/new`, JournalKind.MADE_DIRECTORY, "ImportArchive"],
      [`${at}/new/deep`, JournalKind.MADE_DIRECTORY, "ImportArchive"],
      [`${via}/new/deep/imp`, JournalKind.REPLACED, "ImportArchive"],
    ]);
  }, 60_000);
});
