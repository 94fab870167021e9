// The stat cache's writes behind the call: the newest records are the ones
// on disk, a load after the in-memory copy was evicted waits for them, and a
// write that fails is logged and fails no one.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { StatCache, type StatRecord } from "./stat-cache.js";

const base = mkdtempSync(path.join(tmpdir(), "stat-cache-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const records = (tag: string, count = 3): StatRecord[] => Array.from({ length: count }, (_, i) => ({ path: `/${tag}/${i}.txt`, version: `v-${tag}-${i}`, sha256: tag.padEnd(64, "0") }));
const onDisk = (dir: string, workspace: string): string[] => JSON.parse(readFileSync(path.join(dir, `${workspace}.json`), "utf8")).paths;

it("saves in a row leave the newest on disk, and another daemon's cache loads it", async () => {
  const dir = path.join(base, "rows");
  const cache = new StatCache(dir);
  for (const tag of ["a", "b", "c"]) cache.save("w", records(tag));
  expect([...(await cache.load("w")).keys()]).toEqual(records("c").map((r) => r.path));
  await cache.flush();
  expect(onDisk(dir, "w")).toEqual(records("c").map((r) => r.path));
  expect([...(await new StatCache(dir).load("w")).keys()]).toEqual(records("c").map((r) => r.path));
});

it("a load of a workspace no longer kept in memory waits for its pending write", async () => {
  const dir = path.join(base, "evicted");
  const cache = new StatCache(dir);
  cache.save("first", records("first", 2000));
  // More workspaces than it keeps in memory: "first" is evicted while its write may still be pending.
  for (const other of ["o1", "o2", "o3", "o4"]) cache.save(other, records(other));
  const loaded = await cache.load("first");
  expect(loaded.size).toBe(2000);
  expect(loaded.get("/first/1999.txt")?.version).toBe("v-first-1999");
  await cache.flush();
});

it("a write that fails is logged and rejects nothing; the records stay in memory", async () => {
  const blocked = path.join(base, "not-a-directory");
  writeFileSync(blocked, "");
  const warnings: unknown[] = [];
  const cache = new StatCache(blocked, { warn: (...args: unknown[]) => void warnings.push(args) });
  cache.save("w", records("x"));
  await cache.flush();
  expect(warnings).toHaveLength(1);
  expect((await cache.load("w")).size).toBe(3);
});
