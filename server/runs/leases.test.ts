// Leases against a real store (a local directory; the conditional writes are
// the same contract as S3's: store-contract.ts), whose conditional writes are
// slowed so that renewals overlap as they do on a loaded daemon or a slow
// S3: a renewal must never take another renewal of its own run for the
// lease changing hands, and a release must not be undone by one.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { FileStore } from "../snapshots/file-store.js";
import { Leases } from "./leases.js";

/** A file store whose conditional overwrites take `delayMs` before they are made, and wait while it is cut off. */
class SlowStore extends FileStore {
  cutOff: Promise<void> | undefined;
  constructor(dir: string, private readonly delayMs: number) {
    super(dir);
  }
  override async replaceIfMatch(key: string, body: Buffer, etag: string, signal?: AbortSignal): Promise<string | undefined> {
    await this.cutOff;
    await sleep(this.delayMs);
    return super.replaceIfMatch(key, body, etag, signal);
  }
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function slowStore(dir = mkdtempSync(path.join(tmpdir(), "ftd-leases-"))): Promise<SlowStore> {
  dirs.push(dir);
  const store = new SlowStore(dir, 30);
  await store.check();
  return store;
}

describe("leases whose renewals overlap", () => {
  it("a run renewing its lease several times at once keeps it, with every renewal answered", async () => {
    const store = await slowStore();
    const leases = new Leases(store, 60_000, "node-a");
    await leases.acquire("w", "run-1", new Date().toISOString());
    const confirms: Promise<void>[] = [];
    // Started a few milliseconds apart: each writes a lease with its own expiry.
    for (let i = 0; i < 6; i++) {
      confirms.push(leases.confirm("w", "run-1"));
      await sleep(5);
    }
    await Promise.all(confirms);
    expect(leases.holds("w", "run-1")).toBe(true);
    await leases.release("w", "run-1");
  });

  it("a release while a renewal is under way leaves the lease released: another daemon takes it at once", async () => {
    const store = await slowStore();
    const a = new Leases(store, 60_000, "node-a");
    await a.acquire("w", "run-1", new Date().toISOString());
    const renewing = a.confirm("w", "run-1");
    await sleep(5);
    await a.release("w", "run-1");
    await renewing;
    const b = new Leases(store, 60_000, "node-b");
    await b.acquire("w", "run-2", new Date().toISOString());
    expect(b.holds("w", "run-2")).toBe(true);
    expect((await b.describe("w"))?.runId).toBe("run-2");
    await b.release("w", "run-2");
  });

  it("a lease taken over while its holder was cut off is lost to it", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ftd-leases-"));
    const storeA = await slowStore(dir);
    const a = new Leases(storeA, 300, "node-a");
    await a.acquire("w", "run-1", new Date().toISOString());
    let reconnect!: () => void;
    storeA.cutOff = new Promise((resolve) => (reconnect = resolve));
    await sleep(400); // past the TTL: the ticks' renewals wait
    const b = new Leases(await slowStore(dir), 60_000, "node-b");
    await b.acquire("w", "run-2", new Date().toISOString());
    storeA.cutOff = undefined;
    reconnect();
    await expect(a.confirm("w", "run-1")).rejects.toMatchObject({ reason: "RUN_ACTIVE" });
    expect(a.holds("w", "run-1")).toBe(false);
    expect((await b.describe("w"))?.runId).toBe("run-2");
    await b.release("w", "run-2");
  });
});
