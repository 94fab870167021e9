// Watch and the journal, end to end: a real daemon, real clients over a
// socket, real files. Order, resumption (after a break, a restart, a
// SIGKILL), retention, slow watchers, and who made each change.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, JournalKind, type FileToolsClient, type JournalEntry } from "../../clients/ts/src/index.js";
import { expectError, setup, startDaemon, type Daemon } from "./daemon.js";

/** Takes `count` entries from a watch (which keeps running in the daemon until `stop`). */
async function take(iterator: AsyncIterator<JournalEntry>, count: number): Promise<JournalEntry[]> {
  const out: JournalEntry[] = [];
  while (out.length < count) {
    const next = await iterator.next();
    if (next.done) break;
    out.push(next.value);
  }
  return out;
}

/** A watch that has gone live (its history sent), so that what is written next is seen. */
async function liveWatch(client: FileToolsClient, ws: string, options: Parameters<ReturnType<FileToolsClient["workspace"]>["watch"]>[0] = {}) {
  const controller = new AbortController();
  let live!: () => void;
  const isLive = new Promise<void>((resolve) => (live = resolve));
  const iterator = client.workspace(ws).watch({ ...options, signal: controller.signal, onLive: () => live() });
  const first = iterator.next(); // starts the call
  // Handled here too: a watch stopped before its first entry is taken (a resume with nothing left to see) rejects it, CANCELLED, to nobody.
  first.catch(() => undefined);
  // With a history to send, the call is under way once its first entry is asked for; live only after it is read.
  if (options.since === undefined) await isLive;
  let taken = false;
  const wrapped: AsyncIterator<JournalEntry> = {
    next: () => {
      if (!taken) {
        taken = true;
        return first;
      }
      return iterator.next();
    },
  };
  return { iterator: wrapped, stop: () => controller.abort() };
}

describe("watch: a mixed workload from several clients", () => {
  let d: Awaited<ReturnType<typeof setup>>;
  const clients: FileToolsClient[] = [];
  beforeAll(async () => {
    d = await setup("mixed");
    for (let i = 0; i < 3; i++) clients.push(connect(d.address));
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await d?.stop();
  });

  it("sees every change of 1,000, in order, with directory moves and deletes, as GetJournal has them", async () => {
    const watch = await liveWatch(d.client, d.ws);
    // Each client works in its own directory, in order; the three run at once.
    const expected: Array<Array<{ kind: JournalKind; path: string; from?: string }>> = [[], [], []];
    const work = clients.map(async (client, c) => {
      const w = client.workspace(d.ws);
      const log = expected[c]!;
      for (let round = 0; log.length < 330; round++) {
        const dir = `/c${c}/r${round}`;
        await w.mkdir(dir);
        // The first round's makes the client's directory on its way, told first.
        if (round === 0) log.push({ kind: JournalKind.MADE_DIRECTORY, path: `/c${c}` });
        log.push({ kind: JournalKind.MADE_DIRECTORY, path: dir });
        for (let f = 0; f < 5; f++) {
          await w.writeText(`${dir}/f${f}.txt`, `round ${round} file ${f}\n`);
          log.push({ kind: JournalKind.CREATED, path: `${dir}/f${f}.txt` });
        }
        await w.edit(`${dir}/f0.txt`, { oldText: "file 0", newText: "file zero" });
        log.push({ kind: JournalKind.MODIFIED, path: `${dir}/f0.txt` });
        await w.move(`${dir}`, `${dir}-moved`);
        log.push({ kind: JournalKind.MOVED, path: `${dir}-moved`, from: dir });
        await w.delete(`${dir}-moved`, { recursive: true });
        log.push({ kind: JournalKind.DELETED, path: `${dir}-moved` });
        await w.writeText(`/c${c}/keep${round}.txt`, "kept\n");
        log.push({ kind: JournalKind.CREATED, path: `/c${c}/keep${round}.txt` });
      }
    });
    await Promise.all(work);
    const total = expected.reduce((n, log) => n + log.length, 0);
    expect(total).toBeGreaterThanOrEqual(990);
    const seen = await take(watch.iterator, total);
    watch.stop();
    // Cursors 1, 2, 3, … with no gap and nothing twice.
    expect(seen.map((e) => Number(e.cursor))).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    // Each client's changes in the order it made them.
    for (const [c, log] of expected.entries()) {
      const mine = seen.filter((e) => `${e.path}/`.startsWith(`/c${c}/`)).map((e) => ({ kind: e.kind, path: e.path, ...(e.fromPath ? { from: e.fromPath } : {}) }));
      expect(mine).toEqual(log);
    }
    const moved = seen.find((e) => e.kind === JournalKind.MOVED)!;
    expect(moved.type).toBe(2); // FILE_TYPE_DIRECTORY
    expect(moved.actor?.rpc).toBe("Move");
    const written = seen.find((e) => e.kind === JournalKind.CREATED)!;
    expect(written.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(written.versionAfter).not.toBe("");
    // GetJournal reads the same journal.
    const journal = await d.client.workspace(d.ws).journal();
    expect(journal.map((e) => [e.cursor, e.path, e.kind])).toEqual(seen.map((e) => [e.cursor, e.path, e.kind]));
  }, 180_000);
});

describe("watch: resume, restart, SIGKILL", () => {
  it("a watcher that disconnects and resumes from its cursor misses nothing and sees nothing twice", async () => {
    const d = await setup("resume");
    try {
      const w = d.client.workspace(d.ws);
      const first = await liveWatch(d.client, d.ws);
      for (let i = 0; i < 50; i++) await w.writeText(`/a${i}.txt`, `${i}\n`);
      const before = await take(first.iterator, 20);
      first.stop();
      for (let i = 50; i < 100; i++) await w.writeText(`/a${i}.txt`, `${i}\n`);
      const last = before[before.length - 1]!.cursor;
      const again = await liveWatch(d.client, d.ws, { since: last });
      const after = await take(again.iterator, 80);
      again.stop();
      expect([...before, ...after].map((e) => e.path)).toEqual(Array.from({ length: 100 }, (_, i) => `/a${i}.txt`));
    } finally {
      await d.stop();
    }
  });

  it("the same across a daemon restart, and numbering goes on", async () => {
    const d = await setup("restart");
    const w = d.client.workspace(d.ws);
    for (let i = 0; i < 30; i++) await w.writeText(`/b${i}.txt`, "x");
    await d.stop(true);
    const again = await startDaemon({ dataDir: d.dataDir });
    try {
      const w2 = again.client.workspace(d.ws);
      await w2.writeText("/after.txt", "y");
      const watch = await liveWatch(again.client, d.ws, { since: 10 });
      const seen = await take(watch.iterator, 21);
      watch.stop();
      expect(seen.map((e) => Number(e.cursor))).toEqual(Array.from({ length: 21 }, (_, i) => i + 11));
      expect(seen[seen.length - 1]!.path).toBe("/after.txt");
    } finally {
      await again.stop();
    }
  });

  it("after a SIGKILL mid-write, every acknowledged write is in the journal, and a watcher resumes from its cursor without a miss or a repeat", async () => {
    const d = await setup("killed");
    const w = d.client.workspace(d.ws);
    // A watcher follows the writes until the daemon dies.
    const watch = await liveWatch(d.client, d.ws);
    const seenBefore: JournalEntry[] = [];
    const reading = (async () => {
      for (let next = await watch.iterator.next(); !next.done; next = await watch.iterator.next()) seenBefore.push(next.value);
    })().catch(() => undefined);
    const acknowledged: Array<{ path: string; version: string }> = [];
    let stop = false;
    const writers = Array.from({ length: 4 }, async (_, k) => {
      for (let i = 0; !stop; i++) {
        try {
          const r = await w.writeText(`/k${k}/f${i % 7}.txt`, `${k} ${i}\n`.repeat(100));
          acknowledged.push({ path: r.path, version: r.version });
        } catch {
          return; // the daemon is gone
        }
      }
    });
    while (acknowledged.length < 300) await new Promise((r) => setTimeout(r, 5));
    d.proc.kill("SIGKILL");
    stop = true;
    await Promise.all(writers);
    await new Promise((r) => (d.proc.exitCode !== null || d.proc.signalCode !== null ? r(null) : d.proc.once("exit", r)));
    watch.stop();
    await reading;
    const again = await startDaemon({ dataDir: d.dataDir });
    try {
      const journal = await again.client.workspace(d.ws).journal();
      const journaled = new Set(journal.map((e) => `${e.path} ${e.versionAfter}`));
      const lost = acknowledged.filter((a) => !journaled.has(`${a.path} ${a.version}`));
      expect(lost).toEqual([]);
      expect(journal.map((e) => Number(e.cursor))).toEqual(Array.from({ length: journal.length }, (_, i) => i + 1));
      // The watcher, on the new daemon, from the last cursor it saw: together, the journal once, in order.
      const cursor = seenBefore.length === 0 ? 0 : Number(seenBefore[seenBefore.length - 1]!.cursor);
      const resumed = await liveWatch(again.client, d.ws, { since: cursor });
      const seenAfter = await take(resumed.iterator, journal.length - cursor);
      resumed.stop();
      expect([...seenBefore, ...seenAfter].map((e) => Number(e.cursor))).toEqual(journal.map((e) => Number(e.cursor)));
    } finally {
      await again.stop();
    }
  }, 120_000);
});

describe("watch: retention, bad requests, slow watchers, who", () => {
  let d: Daemon;
  let client: FileToolsClient;
  beforeAll(async () => {
    d = await startDaemon({ args: ["--journal-max-entries", "40", "--watch-queue", "8"] });
    client = d.client;
    await client.workspaces.createWorkspace({ workspace: "small" });
  });
  afterAll(() => d?.stop());

  it("a cursor older than the retention is OUT_OF_RANGE with the oldest still held; one past the end too", async () => {
    const w = client.workspace("small");
    for (let i = 0; i < 200; i++) await w.writeText(`/r${i % 5}.txt`, `${i}`);
    const error = await expectError(() => take(w.watch({ since: 1, retries: 0 }), 1), "OUT_OF_RANGE", "CURSOR_OUT_OF_RANGE");
    const oldest = Number(error.metadata.oldest_cursor);
    expect(oldest).toBeGreaterThan(2);
    expect(oldest).toBeLessThanOrEqual(200 - 40 + 1);
    expect(error.metadata.last_cursor).toBe("200");
    expect(error.message).toContain(`${oldest}`);
    // From the oldest held: that entry first.
    const watch = await liveWatch(client, "small", { since: oldest - 1 });
    const [firstHeld] = await take(watch.iterator, 1);
    watch.stop();
    expect(Number(firstHeld!.cursor)).toBe(oldest);
    await expectError(() => take(w.watch({ since: 201, retries: 0 }), 1), "OUT_OF_RANGE", "CURSOR_OUT_OF_RANGE");
  });

  it("bad globs, unknown workspaces and bad time ranges get clear statuses", async () => {
    await expectError(() => take(client.workspace("small").watch({ globs: ["!(a)"], retries: 0 }), 1), "INVALID_ARGUMENT", "INVALID_ARGUMENT");
    await expectError(() => take(client.workspace("nope").watch({ retries: 0 }), 1), "NOT_FOUND", "WORKSPACE_NOT_FOUND");
    await expectError(() => client.workspace("small").journal({ since: new Date(2000), until: new Date(1000) }), "INVALID_ARGUMENT", "INVALID_ARGUMENT");
  });

  it("a watcher too slow for its queue is told what it missed and where to resume; the client resumes by itself", async () => {
    // This daemon keeps more entries than are written here, so that the watcher can resume.
    const roomy = await startDaemon({ args: ["--watch-queue", "8"] });
    await roomy.client.workspaces.createWorkspace({ workspace: "slow" });
    const w = roomy.client.workspace("slow");
    // Long paths (about 1 KiB an entry) fill the window in a few dozen entries; their directories made before the watch.
    const dir = Array.from({ length: 4 }, (_, i) => `${i}`.repeat(250)).join("/");
    await w.mkdir(`/${dir}`);
    // Watchers on a connection with grpc-js's smallest flow-control window, so that not reading holds the daemon back soon.
    const slow = connect(roomy.address, { channelOptions: { "grpc-node.flow_control_window": 65_535 } });
    // The raw stream: the missed event itself.
    const controller = new AbortController();
    const raw = slow.journal.watch({ workspace: "slow", globs: [] }, { signal: controller.signal })[Symbol.asyncIterator]();
    expect((await raw.next()).value.event.case).toBe("live");
    // The resuming iterator, not read until the writes are done.
    const resuming = await liveWatch(slow, "slow");
    const paths = Array.from({ length: 300 }, (_, i) => `/${dir}/s${i}.txt`);
    for (const path of paths) await w.writeText(path, "s");
    const events = [];
    for (let next = await raw.next(); !next.done; next = await raw.next()) events.push(next.value.event);
    const missed = events.find((e) => e.case === "missed");
    expect(missed, "a missed event").toBeDefined();
    const received = events.flatMap((e) => (e.case === "changes" ? e.value.entries : []));
    if (missed?.case === "missed") {
      expect(Number(missed.value.count) + received.length).toBe(300);
      expect(missed.value.resumeCursor).toBe(received[received.length - 1]?.cursor ?? 0n);
    }
    const seen = await take(resuming.iterator, 300);
    resuming.stop();
    slow.close();
    await roomy.stop();
    expect(seen.map((e) => e.path)).toEqual(paths);
  }, 120_000);

  it("deleting a workspace ends its watches; watching it again is WORKSPACE_NOT_FOUND", async () => {
    await client.workspaces.createWorkspace({ workspace: "doomed" });
    await client.workspace("doomed").writeText("/a.txt", "a");
    const controller = new AbortController();
    const raw = client.journal.watch({ workspace: "doomed", globs: [], cursor: 0n }, { signal: controller.signal });
    const events: string[] = [];
    const ended = (async () => {
      for await (const message of raw) events.push(message.event.case ?? "");
    })();
    while (!events.includes("live")) await new Promise((r) => setTimeout(r, 10));
    await client.workspaces.deleteWorkspace({ workspace: "doomed" });
    await ended; // the stream ended by itself
    expect(events).toEqual(["changes", "live"]);
    await expectError(() => take(client.workspace("doomed").watch({ since: 0 }), 1), "NOT_FOUND", "WORKSPACE_NOT_FOUND");
  });

  it("a restore, an import and a run that starts from a snapshot are one REPLACED entry each, of the tree they changed", async () => {
    await client.workspaces.createWorkspace({ workspace: "trees" });
    const w = client.workspace("trees");
    const run = await client.workspaces.startRun({ workspace: "trees" });
    await w.writeText("/kept.txt", "v1\n");
    const { snapshot } = await w.finishRun(run.run!.id);
    await w.writeText("/kept.txt", "v2\n");
    const watch = await liveWatch(client, "trees");
    await client.workspaces.restoreSnapshot({ workspace: "trees", snapshotId: snapshot!.id });
    const [restored] = await take(watch.iterator, 1);
    expect(restored).toMatchObject({ kind: JournalKind.REPLACED, path: "/", actor: { rpc: "RestoreSnapshot" } });
    const tarball = await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const source = mkdtempSync(path.join(tmpdir(), "ftd-watch-tar-"));
      writeFileSync(path.join(source, "in.txt"), "from an archive\n");
      const tar = spawn("tar", ["-cf", "-", "-C", source, "in.txt"], { stdio: ["ignore", "pipe", "ignore"] });
      tar.stdout.on("data", (c: Buffer) => chunks.push(c));
      tar.on("error", reject).on("close", () => resolve(Buffer.concat(chunks)));
    });
    await w.importArchive((async function* () {
      yield new Uint8Array(tarball);
    })(), { path: "/imported" });
    const [imported] = await take(watch.iterator, 1);
    expect(imported).toMatchObject({ kind: JournalKind.REPLACED, path: "/imported", actor: { rpc: "ImportArchive" } });
    // A run that starts from a snapshot other than the copy's restores it: one entry too, with the new run.
    const second = await client.workspaces.startRun({ workspace: "trees", restore: snapshot!.id });
    const [started] = await take(watch.iterator, 1);
    watch.stop();
    expect(started).toMatchObject({ kind: JournalKind.REPLACED, path: "/", actor: { rpc: "StartRun", runId: second.run!.id } });
  });

  it("each entry says who made it: the RPC, the run, the client's call id; globs filter", async () => {
    await client.workspaces.createWorkspace({ workspace: "who" });
    const w = client.workspace("who");
    const watch = await liveWatch(client, "who", { globs: ["*.md"] });
    const run = await client.workspaces.startRun({ workspace: "who" });
    await w.writeText("/skip.txt", "no");
    await w.writeText("/notes.md", "yes", { metadata: { "filetools-call-id": "call-42" } });
    await w.mkdir("/docs");
    await w.writeText("/docs/more.md", "yes");
    const [notes, more] = await take(watch.iterator, 2);
    watch.stop();
    expect(notes).toMatchObject({ path: "/notes.md", kind: JournalKind.CREATED, actor: { rpc: "Write", callId: "call-42", runId: run.run!.id } });
    expect(more!.path).toBe("/docs/more.md");
    const byRun = await w.journal({ runId: run.run!.id });
    expect(byRun.map((e) => e.path)).toEqual(["/skip.txt", "/notes.md", "/docs", "/docs/more.md"]);
    const mdOnly = await w.journal({ globs: ["docs/**"] });
    expect(mdOnly.map((e) => e.path)).toEqual(["/docs", "/docs/more.md"]);
  });
});
