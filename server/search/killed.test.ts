// A search killed mid-way, with batches on the piscina workers: its consumer
// stops after the first results, its call is cancelled, its budget runs out
// (the workers are terminated mid-file). The process sees no rejection
// nobody handles and no 'error' event nobody listens to, and every directory
// and file the search held is given back once its workers let go.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { descriptorsUnder, eventually, watchProcess } from "../../test/support/process-health.js";
import { Workspace } from "../workspace/workspace.js";
import { SearchPool } from "./pool.js";
import { search, type SearchOptions } from "./search.js";

let base: string;
let root: string;
let workspace: Workspace;
let pool: SearchPool;

beforeAll(async () => {
  base = mkdtempSync(path.join(tmpdir(), "search-killed-"));
  root = path.join(base, "root");
  // Enough directories and matches that batches are in flight when the search is killed.
  for (let d = 0; d < 60; d++) {
    mkdirSync(path.join(root, `d${d}`), { recursive: true });
    for (let f = 0; f < 40; f++) writeFileSync(path.join(root, `d${d}`, `f${f}.txt`), "needle here\n".repeat(200) + "a".repeat(30) + "!\n");
  }
  workspace = await Workspace.open("t", root, false);
  pool = await SearchPool.start(2);
});

afterAll(async () => {
  await pool?.close();
  workspace?.close();
  rmSync(base, { recursive: true, force: true });
});

const options: SearchOptions = {
  path: "/",
  pattern: "needle",
  fixedStrings: true,
  caseInsensitive: false,
  include: [],
  exclude: [],
  contextBefore: 0,
  contextAfter: 0,
  mode: "content",
  order: "path",
  maxResults: 10_000,
};

it.each([
  ["its consumer stops after the first results", options, 30_000, "stop"],
  ["its call is cancelled after the first results", options, 30_000, "cancel"],
  // (a+)+\1$ cannot fall back to the linear engine: the workers are stuck in a file until terminated.
  ["its budget runs out with the workers mid-file", { ...options, pattern: "(a+)+\\1$", fixedStrings: false }, 300, "drain"],
] as const)("a search killed mid-way (%s): nothing thrown at the process, every descriptor given back", async (_, searchOptions, budgetMs, how) => {
  const health = watchProcess();
  try {
    const held = descriptorsUnder(root); // the workspace's root
    const abort = new AbortController();
    const events = search(workspace, pool, searchOptions, abort.signal, budgetMs);
    if (how === "drain") {
      let next;
      do next = await events.next();
      while (!next.done);
      expect(next.value.timedOut).toBe(true);
    } else {
      expect((await events.next()).done).toBe(false);
      if (how === "stop") await events.return(undefined as never);
      else {
        abort.abort();
        // Batches already done may still be reported; then the search ends with the cancellation.
        const drained = (async () => {
          while (!(await events.next()).done);
        })();
        await expect(drained).rejects.toThrow();
      }
    }
    await eventually(() => descriptorsUnder(root).length === held.length, 10_000);
    expect(descriptorsUnder(root)).toEqual(held);
    expect(health.problems).toEqual([]);
  } finally {
    health.stop();
  }
});
