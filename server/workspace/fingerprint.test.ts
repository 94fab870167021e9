// When a walk of a workspace may stand for its tree later (ListedTree.current):
// an in-place restore skips its walk under the lock on that word alone, so
// every change the daemon makes, and every tree it cannot vouch for, must
// make it false. And a tree's fingerprint, kept with a copy's state across
// restarts: however the entries are hashed, its value is the SHA-256 of one
// line per entry.
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listTree, TreeFingerprint } from "./fingerprint.js";
import { parsePath } from "./paths.js";
import { walkOrder } from "./walk.js";
import { Workspace } from "./workspace.js";

let base: string;
let managed: Workspace;

beforeEach(async () => {
  base = mkdtempSync(path.join(tmpdir(), "fingerprint-test-"));
  writeFileSync(path.join(base, "a.txt"), "a\n");
  managed = await Workspace.open("w", base, false);
});

afterEach(() => {
  managed.close();
  rmSync(base, { recursive: true, force: true });
});

const text = (value: string) => new TextEncoder().encode(value);

describe("a listing of a managed workspace", () => {
  it("is current until a change begins through the workspace, even one that fails", async () => {
    const listed = await listTree(managed);
    expect(listed.current(managed)).toBe(true);
    await managed.makeDir(parsePath("/d"), { parents: false });
    expect(listed.current(managed)).toBe(false);
    const again = await listTree(managed);
    await expect(managed.remove(parsePath("/d/missing/x"), { recursive: false })).resolves.toBe(false);
    expect(again.current(managed)).toBe(false);
  });

  it("is not current once a file is set aside (an ApplyPatch step), nor once it is put back or dropped", async () => {
    const before = await listTree(managed);
    const aside = (await managed.setAside(parsePath("/a.txt")))!;
    expect(before.current(managed)).toBe(false);
    const without = await listTree(managed);
    await aside.putBack();
    expect(without.current(managed)).toBe(false);
    const back = await listTree(managed);
    await (await managed.setAside(parsePath("/a.txt")))!.drop();
    expect(back.current(managed)).toBe(false);
    const dropped = await listTree(managed);
    expect(dropped.current(managed)).toBe(true);
    expect(dropped.listing).toEqual([]);
  });

  it("is never current when a change was under way as its walk began (it may have landed behind the walk)", async () => {
    const writing = managed.writeFile(parsePath("/b.txt"), text("b\n"), { createDirs: false, mode: "create-or-replace" });
    const listed = await listTree(managed);
    await writing;
    expect(listed.current(managed)).toBe(false);
    expect((await listTree(managed)).current(managed)).toBe(true);
  });

  it("is not current for another object on the same directory, nor once its own is closed (a managed directory swapped by a restore)", async () => {
    const other = await Workspace.open("w", base, false);
    const listed = await listTree(managed);
    expect(listed.current(other)).toBe(false);
    other.close();
    managed.close();
    expect(listed.current(managed)).toBe(false);
  });
});

describe("a listing of a bound workspace", () => {
  it("is never current: it may change behind the daemon's back", async () => {
    const bound = await Workspace.open("b", base, true);
    try {
      expect((await listTree(bound)).current(bound)).toBe(false);
    } finally {
      bound.close();
    }
  });
});

describe("walkOrder", () => {
  it("is the order a walk lists entries in, names that sort differently joined or apart included", async () => {
    for (const dir of ["a", "a/b", "a-b", "a.b", "B", "é", "z/y"]) mkdirSync(path.join(base, dir), { recursive: true });
    for (const file of ["a/b/c", "a/b-c", "a-b/x", "a.b/x", "B/x", "é/x", "z/y/x", "a0", "_"]) writeFileSync(path.join(base, file), "x");
    const { listing } = await listTree(managed);
    const shuffled = [...listing].reverse();
    shuffled.push(...shuffled.splice(0, 5));
    expect(shuffled.sort(walkOrder).map((e) => e.path)).toEqual(listing.map((e) => e.path));
  });
});

describe("TreeFingerprint", () => {
  it("is the SHA-256 of the entries' lines, in order, for a tree larger than what is hashed at a time", () => {
    const entries = Array.from({ length: 5000 }, (_, i) => ({ path: `/dir-${i % 7}/é-${i}`, type: i % 3 ? ("file" as const) : ("directory" as const), mode: 0o644, version: `v${i}` }));
    const fingerprint = new TreeFingerprint();
    for (const entry of entries) fingerprint.add(entry);
    const lines = entries.map((e) => `${e.path}\0${e.type}\0${e.mode}\0${e.version}\n`).join("");
    expect(fingerprint.result()).toEqual({ fingerprint: createHash("sha256").update(lines).digest("hex"), entries: 5000 });
  });

  it("of no entries is the SHA-256 of nothing", () => {
    expect(new TreeFingerprint().result()).toEqual({ fingerprint: createHash("sha256").digest("hex"), entries: 0 });
  });
});
