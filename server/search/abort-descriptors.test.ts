// A search that times out while a worker is in the middle of a file: the
// worker's thread is terminated and Node closes the file it had open when the
// thread exits. Nothing may close that number again: by then it may be
// another descriptor of the process.
import { fstatSync, mkdirSync, mkdtempSync, promises as fsp, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { Workspace } from "../workspace/workspace.js";
import { SearchPool } from "./pool.js";
import { search, type SearchSummary } from "./search.js";

it.each(["path", "found"] as const)("a timed-out search (order %s) never closes a descriptor the process opened after the worker's exit", async (order) => {
  const base = mkdtempSync(path.join(tmpdir(), "search-abort-"));
  mkdirSync(path.join(base, "root"));
  mkdirSync(path.join(base, "mine"));
  // (a+)+\1$ with a backreference cannot fall back to the linear engine: the worker is stuck in this file until terminated.
  writeFileSync(path.join(base, "root", "stuck.txt"), "a".repeat(30) + "!\n");
  const workspace = await Workspace.open("t", path.join(base, "root"), false);
  const pool = await SearchPool.start(1);
  const held: { handle: fsp.FileHandle; ino: number }[] = [];
  try {
    const options = { path: "/", pattern: "(a+)+\\1$", fixedStrings: false, caseInsensitive: false, include: [], exclude: [], contextBefore: 0, contextAfter: 0, mode: "content" as const, order };
    const events = search(workspace, pool, options, new AbortController().signal, 200);
    let next: IteratorResult<unknown, SearchSummary>;
    do next = await events.next();
    while (!next.done);
    expect(next.value.timedOut).toBe(true);
    // Open files of our own for a while: once the worker's thread has exited, one of them takes the number of its file.
    for (let i = 0; i < 300; i++) {
      const file = path.join(base, "mine", String(i));
      writeFileSync(file, "");
      const handle = await fsp.open(file, "r");
      held.push({ handle, ino: (await handle.stat()).ino });
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // Each number still names the file it was opened for (closed under us, it is closed or names a later one).
    const lost = held.filter(({ handle, ino }) => {
      try {
        return fstatSync(handle.fd).ino !== ino;
      } catch {
        return true;
      }
    });
    expect(lost.map(({ handle }) => handle.fd)).toEqual([]);
  } finally {
    await Promise.all(held.map(({ handle }) => handle.close().catch(() => undefined)));
    await pool.close();
    await workspace.close();
    rmSync(base, { recursive: true, force: true });
  }
});
