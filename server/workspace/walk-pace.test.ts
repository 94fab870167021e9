// How a walk calls lstat (walk.ts, Pace): synchronously while runs are fast,
// yielding to the event loop every few runs, and on the thread pool for a
// while once a run was slow, trying a synchronous run again after 8 runs,
// then 16, 32... while the tries are slow. Either way it finds the same tree.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { WorkspaceRegistry } from "./registry.js";

/** slowFirst: the first lstat takes 20 ms; slowEach: every one takes 0.5 ms (a run of 16 names is slow). */
const calls = { sync: 0, pooled: 0, slowFirst: false, slowEach: false };

vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  const lstatSync = ((...args: unknown[]) => {
    calls.sync++;
    const wait = calls.slowFirst ? 20 : calls.slowEach ? 0.5 : 0; // a cold cache, a network file system
    calls.slowFirst = false;
    const until = performance.now() + wait;
    while (performance.now() < until);
    return (fs.lstatSync as (...a: unknown[]) => unknown)(...args);
  }) as typeof fs.lstatSync;
  const lstat = (...args: Parameters<typeof fs.promises.lstat>) => {
    calls.pooled++;
    return fs.promises.lstat(...args);
  };
  const promises = { ...fs.promises, lstat };
  return { ...fs, lstatSync, promises, default: { ...fs, lstatSync, promises } };
});

let base: string;
let registry: WorkspaceRegistry;
const expected: string[] = [];

beforeAll(async () => {
  base = mkdtempSync(path.join(tmpdir(), "walk-pace-"));
  registry = await WorkspaceRegistry.start(path.join(base, "data"), new Map());
  await registry.create("w");
  const root = path.join(base, "data", "workspaces", "w");
  for (let d = 0; d < 20; d++) {
    const dir = `d${String(d).padStart(2, "0")}`;
    mkdirSync(path.join(root, dir));
    expected.push(`/${dir}`);
    for (let f = 0; f < 150; f++) {
      const name = `f${String(f).padStart(3, "0")}.txt`;
      writeFileSync(path.join(root, dir, name), `${d} ${f}\n`);
      expected.push(`/${dir}/${name}`);
    }
  }
});

afterAll(() => {
  void registry?.close();
  rmSync(base, { recursive: true, force: true });
});

beforeEach(() => Object.assign(calls, { sync: 0, pooled: 0, slowFirst: false, slowEach: false }));

async function walked(): Promise<string[]> {
  const paths: string[] = [];
  for await (const entry of (await registry.get("w")).walk([], { recursive: true, maxDepth: 0, includeHidden: true, respectGitignore: false })) {
    paths.push(entry.path);
  }
  return paths;
}

describe("the walk's lstat calls", () => {
  it("run synchronously while fast, and let the event loop run meanwhile", async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    try {
      expect(await walked()).toEqual(expected);
    } finally {
      clearInterval(timer);
    }
    // (On a loaded machine a run may be slow enough to move the rest to the pool: not asserted.)
    expect(calls.sync).toBeGreaterThan(0);
    // 3,020 entries: the walk yielded to timers on the way.
    expect(ticks).toBeGreaterThan(0);
  });

  it("move to the thread pool after a slow run, and back once a run tried again is fast, finding the same tree", async () => {
    calls.slowFirst = true;
    expect(await walked()).toEqual(expected);
    // The root's run (20 names) was slow; the next 8 runs went to the pool (d00 and d01: 64, 64, 22; d02: 64, 64) and
    // more only if the machine made a try slow too; the try after them was synchronous again.
    expect(calls.pooled).toBeGreaterThanOrEqual(3 * 150 - 22);
    expect(calls.sync).toBeGreaterThan(20);
    expect(calls.sync + calls.pooled).toBe(expected.length);
  });

  it("stay on the pool while every run tried is slow, trying ever more rarely", async () => {
    calls.slowEach = true;
    expect(await walked()).toEqual(expected);
    // 61 runs: the root's (20 names) and the tries after 8, 16 and 32 runs on the pool were synchronous.
    expect(calls.sync).toBeGreaterThan(20);
    expect(calls.sync).toBeLessThanOrEqual(20 + 3 * 64);
    expect(calls.sync + calls.pooled).toBe(expected.length);
  });
});
