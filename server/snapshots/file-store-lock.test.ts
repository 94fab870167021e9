// The file:// store's conditional writes between daemons on one directory
// (the heads' compare-and-swap): two FileStore instances stand for two
// daemons (each has its own in-process queue, so they meet only at KEY.lock,
// as two processes do). A live owner however slow is waited for; a dead
// owner's lock is broken by one waiter only.
import { mkdtempSync, realpathSync, readFileSync } from "node:fs";
import { promises as fsp } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FileStore } from "./file-store.js";

const KEY = ".heads/w.json";
const fresh = () => realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-lock-")));

describe("the file:// store's lock", () => {
  it("a live holder slower than 10 s is waited for: of two compare-and-swaps on one ETag exactly one succeeds", async () => {
    const dir = fresh();
    const a = new FileStore(dir);
    const b = new FileStore(dir);
    const x = await a.createIfAbsent(KEY, Buffer.from('{"snapshot":"X"}'));
    expect(x).toBeDefined();
    // A is alive but slow inside its write (a long fsync, a stopped or paused process): 10.5 s.
    const slow = a as unknown as { put: FileStore["put"] };
    const realPut = a.put.bind(a);
    slow.put = async (key, body, signal) => {
      await new Promise((r) => setTimeout(r, 10_500));
      return realPut(key, body, signal);
    };
    const fromA = a.replaceIfMatch(KEY, Buffer.from('{"snapshot":"A"}'), x!);
    await new Promise((r) => setTimeout(r, 200)); // A holds the lock, read X, is writing
    const fromB = b.replaceIfMatch(KEY, Buffer.from('{"snapshot":"B"}'), x!);
    const [ea, eb] = await Promise.all([fromA, fromB]);
    console.log("A swapped:", ea !== undefined, "B swapped:", eb !== undefined, "head now:", readFileSync(path.join(dir, KEY), "utf8"));
    expect([ea, eb].filter((e) => e !== undefined).length).toBe(1);
  }, 30_000);

  it("a lock left by a holder that died is broken by one waiter only: one compare-and-swap wins in each of 60 trials", async () => {
    let doubled = 0;
    const trials = 60;
    for (let t = 0; t < trials; t++) {
      const dir = fresh();
      const stores = Array.from({ length: 6 }, () => new FileStore(dir));
      const x = await stores[0]!.createIfAbsent(KEY, Buffer.from('{"snapshot":"X"}'));
      // A lock left by a killed holder, older than STALE_LOCK_MS.
      const lock = path.join(dir, KEY + ".lock");
      await fsp.writeFile(lock, "");
      const old = new Date(Date.now() - 60_000);
      await fsp.utimes(lock, old, old);
      const results = await Promise.all(stores.map((s, i) => s.replaceIfMatch(KEY, Buffer.from(`{"snapshot":"${i}"}`), x!)));
      const ok = results.filter((e) => e !== undefined).length;
      if (ok > 1) doubled++;
      await fsp.rm(dir, { recursive: true, force: true });
    }
    console.log(`stale-lock break: more than one compare-and-swap won in ${doubled} of ${trials} trials`);
    expect(doubled).toBe(0);
  }, 60_000);
});
