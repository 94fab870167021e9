// What watches cost the daemon: 1,000 cancelled watches leave no descriptor
// behind, and a watcher that never reads does not grow the daemon's memory
// past its bound over 100,000 changes (RSS read from /proc, printed).
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type FileToolsClient } from "../../clients/ts/src/index.js";
import { startDaemon, type Daemon } from "./daemon.js";

/** Descriptors of `pid` open on files under `dir`. */
function descriptorsUnder(pid: number, dir: string): string[] {
  return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      return target.startsWith(dir) ? [target] : [];
    } catch {
      return [];
    }
  });
}

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))!;
  return Number(/(\d+)/.exec(line)![1]) / 1024;
}

describe("watch: cancellation storm", () => {
  let d: Daemon;
  beforeAll(async () => {
    d = await startDaemon();
    await d.client.workspaces.createWorkspace({ workspace: "storm" });
    for (let i = 0; i < 50; i++) await d.client.workspace("storm").writeText(`/f${i}.txt`, `${i}`);
  });
  afterAll(() => d?.stop());

  it("1,000 watches cancelled (live, and in the middle of their history) leave no descriptor behind", async () => {
    const before = descriptorsUnder(d.proc.pid!, d.dataDir).sort();
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          const controller = new AbortController();
          const fromHistory = i % 2 === 0;
          const watch = d.client.workspace("storm").watch({ signal: controller.signal, retries: 0, ...(fromHistory ? { since: 0 } : {}) });
          if (fromHistory) await watch.next(); // one entry of the history read, the rest left
          else {
            const first = watch.next();
            await new Promise((r) => setTimeout(r, 5));
            controller.abort();
            await first.catch(() => undefined);
            return;
          }
          controller.abort();
          await watch.return(undefined);
        }),
      );
    }
    // The daemon has seen every cancellation once a new watch and a write go through.
    const controller = new AbortController();
    let live!: () => void;
    const isLive = new Promise<void>((r) => (live = r));
    const watch = d.client.workspace("storm").watch({ signal: controller.signal, onLive: () => live() });
    const next = watch.next();
    await isLive;
    await d.client.workspace("storm").writeText("/last.txt", "x");
    expect((await next).value?.path).toBe("/last.txt");
    controller.abort();
    await new Promise((r) => setTimeout(r, 200));
    expect(descriptorsUnder(d.proc.pid!, d.dataDir).sort()).toEqual(before);
  }, 300_000);
});

describe("watch: a watcher that never reads", () => {
  let d: Daemon;
  let writers: FileToolsClient[] = [];
  let stuck: FileToolsClient | undefined;
  beforeAll(async () => {
    d = await startDaemon();
    await d.client.workspaces.createWorkspace({ workspace: "never" });
    writers = Array.from({ length: 4 }, () => connect(d.address));
  });
  // Removing the data dir's 100,000 deep directories takes minutes on a loaded machine (3,000 took 7 s at load 13).
  afterAll(async () => {
    for (const w of [...writers, stuck]) w?.close();
    await d?.stop();
  }, 600_000);

  it("does not grow the daemon's memory past its queue's bound over 100,000 changes", async () => {
    // A long directory name: about 3 KiB an entry, so that 100,000 entries held would be well over 300 MiB
    // (the daemon's RSS swings by up to ~80 MiB under this load with no watcher at all: V8's heap).
    const dir = Array.from({ length: 11 }, (_, i) => `${i % 10}`.repeat(250)).join("/");
    await d.client.workspace("never").mkdir(`/${dir}`);
    // The watcher: its first message taken (live), then never read again, on grpc-js's smallest window.
    stuck = connect(d.address, { channelOptions: { "grpc-node.flow_control_window": 65_535 } });
    const raw = stuck.journal.watch({ workspace: "never", globs: [] })[Symbol.asyncIterator]();
    expect((await raw.next()).value.event.case).toBe("live");
    // Warm up (the code paths, the heap), then measure.
    const total = 100_000;
    const batch = 32;
    let rssWarm = 0;
    let peak = 0;
    const started = Date.now();
    for (let done = 0; done < total; done += batch) {
      await Promise.all(
        Array.from({ length: batch }, (_, i) => writers[i % writers.length]!.workspace("never").mkdir(`/${dir}/d${done + i}`)),
      );
      if (done >= 5_000 && rssWarm === 0) peak = rssWarm = rssMiB(d.proc.pid!);
      if (done % 5_000 === 0) peak = Math.max(peak, rssMiB(d.proc.pid!));
    }
    const rssEnd = rssMiB(d.proc.pid!);
    peak = Math.max(peak, rssEnd);
    console.log(
      `watch-never-reads: ${total} changes in ${((Date.now() - started) / 1000).toFixed(1)} s; daemon RSS after 5,000: ${rssWarm.toFixed(1)} MiB, ` +
        `peak: ${peak.toFixed(1)} MiB, end: ${rssEnd.toFixed(1)} MiB`,
    );
    // Held, those entries alone would be > 300 MiB (paths of 2.8 KB): the queue's bound is 1,024 of them.
    expect(peak - rssWarm).toBeLessThan(150);
    // Cursors 1–11: the first MakeDir's 11 directories (10 parents made on its way); the last 11 of the 100,000 after.
    const journal = await d.client.workspace("never").journal({ afterCursor: BigInt(total) });
    expect(journal.length).toBe(11);
  }, 900_000);
});
