import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, promises as fsp, readFileSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync, existsSync, linkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parsePath } from "./paths.js";
import { Workspace, type MadeDirectories } from "./workspace.js";
import { reasonOf as reasonOfCall } from "../../test/support/trees.js";

let base: string;
let root: string;
let outside: string;
let workspace: Workspace;

beforeEach(async () => {
  base = mkdtempSync(path.join(tmpdir(), "ws-test-"));
  root = path.join(base, "root");
  outside = path.join(base, "outside");
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(path.join(outside, "secret"), "outside secret\n");
  workspace = await Workspace.open("test", root, false);
});

afterEach(async () => {
  await workspace.close();
  rmSync(base, { recursive: true, force: true });
});

const reasonOf = (call: Promise<unknown>) => reasonOfCall(base, call);

async function readText(raw: string): Promise<string> {
  const file = await workspace.openFile(parsePath(raw));
  try {
    return (await file.readAll()).toString();
  } finally {
    await file.close();
  }
}

const write = (raw: string, text: string) => workspace.writeFile(parsePath(raw), Buffer.from(text), { createDirs: true, mode: "create-or-replace" });

describe("paths", () => {
  it("treats the root like / and resolves . and .. lexically", () => {
    expect(parsePath("src/a.ts")).toEqual(["src", "a.ts"]);
    expect(parsePath("/src/a.ts")).toEqual(["src", "a.ts"]);
    expect(parsePath("./src//b/../a.ts")).toEqual(["src", "a.ts"]);
  });

  it("refuses .. above the root, NUL, control characters and over-long names", () => {
    expect(() => parsePath("../x")).toThrow(expect.objectContaining({ reason: "PATH_ESCAPES_WORKSPACE" }));
    expect(() => parsePath("a/../../x")).toThrow(expect.objectContaining({ reason: "PATH_ESCAPES_WORKSPACE" }));
    expect(() => parsePath("a\u0000b")).toThrow(expect.objectContaining({ reason: "INVALID_PATH" }));
    expect(() => parsePath("a\nb")).toThrow(expect.objectContaining({ reason: "INVALID_PATH" }));
    expect(() => parsePath("x".repeat(256))).toThrow(expect.objectContaining({ reason: "INVALID_PATH" }));
    expect(() => parsePath("a/".repeat(2049))).toThrow(expect.objectContaining({ reason: "INVALID_PATH" }));
  });

  it("keeps ~ and %2e%2e as literal names inside the workspace", () => {
    expect(parsePath("~/.ssh/id_rsa")).toEqual(["~", ".ssh", "id_rsa"]);
    expect(parsePath("%2e%2e/x")).toEqual(["%2e%2e", "x"]);
  });
});

describe("containment", () => {
  it("follows symlinks that stay inside", async () => {
    await write("real/file.txt", "inside\n");
    symlinkSync("real", path.join(root, "alias"));
    symlinkSync("real/file.txt", path.join(root, "file-link"));
    expect(await readText("alias/file.txt")).toBe("inside\n");
    expect(await readText("file-link")).toBe("inside\n");
  });

  it("refuses absolute and relative symlinks that lead outside", async () => {
    symlinkSync(path.join(outside, "secret"), path.join(root, "abs"));
    symlinkSync("../outside/secret", path.join(root, "rel"));
    symlinkSync(outside, path.join(root, "dir"));
    expect(await reasonOf(readText("abs"))).toBe("PATH_ESCAPES_WORKSPACE");
    expect(await reasonOf(readText("rel"))).toBe("PATH_ESCAPES_WORKSPACE");
    expect(await reasonOf(readText("dir/secret"))).toBe("PATH_ESCAPES_WORKSPACE");
    expect(await reasonOf(write("dir/new", "x"))).toBe("PATH_ESCAPES_WORKSPACE");
    expect(existsSync(path.join(outside, "new"))).toBe(false);
  });

  it("refuses a prefix sibling of the root", async () => {
    const sibling = `${root}_evil`;
    mkdirSync(sibling);
    writeFileSync(path.join(sibling, "secret"), "evil");
    symlinkSync(sibling, path.join(root, "evil"));
    symlinkSync(`../root_evil/secret`, path.join(root, "evil-rel"));
    expect(await reasonOf(readText("evil/secret"))).toBe("PATH_ESCAPES_WORKSPACE");
    expect(await reasonOf(readText("evil-rel"))).toBe("PATH_ESCAPES_WORKSPACE");
  });

  it("writes through a dangling symlink only when its target is inside", async () => {
    symlinkSync(path.join(outside, "created"), path.join(root, "dangling-out"));
    expect(await reasonOf(write("dangling-out", "x"))).toBe("PATH_ESCAPES_WORKSPACE");
    expect(existsSync(path.join(outside, "created"))).toBe(false);
    symlinkSync("target.txt", path.join(root, "dangling-in"));
    await write("dangling-in", "through\n");
    expect(readFileSync(path.join(root, "target.txt"), "utf8")).toBe("through\n");
  });

  it("refuses a FIFO without blocking", async () => {
    execFileSync("mkfifo", [path.join(root, "pipe")]);
    expect(await reasonOf(readText("pipe"))).toBe("NOT_A_REGULAR_FILE");
    expect(await reasonOf(write("pipe", "x"))).toBe("NOT_A_REGULAR_FILE");
  });

  it("refuses a hard-linked file that may be shared with the outside", async () => {
    linkSync(path.join(outside, "secret"), path.join(root, "hard"));
    expect(await reasonOf(readText("hard"))).toBe("PATH_ESCAPES_WORKSPACE");
  });

  it("keeps using the directory it opened when a component is swapped for a symlink", async () => {
    await write("a/f", "inside\n");
    const file = await workspace.openFile(parsePath("a/f"));
    renameSync(path.join(root, "a"), path.join(root, "a_moved"));
    symlinkSync(outside, path.join(root, "a"));
    try {
      expect((await file.readAll()).toString()).toBe("inside\n");
    } finally {
      await file.close();
    }
    // And a fresh resolution refuses the swapped-in link.
    expect(await reasonOf(readText("a/secret"))).toBe("PATH_ESCAPES_WORKSPACE");
  });

  it("deletes a symlink, never its target, and recursive deletes never follow links", async () => {
    symlinkSync(outside, path.join(root, "out"));
    await write("tree/deep/x", "x");
    symlinkSync(outside, path.join(root, "tree", "deep", "out-link"));
    expect(await workspace.remove(parsePath("out"), { recursive: false })).toBe(true);
    expect(await workspace.remove(parsePath("tree"), { recursive: true })).toBe(true);
    expect(readFileSync(path.join(outside, "secret"), "utf8")).toBe("outside secret\n");
    expect(readdirSync(root)).toEqual([]);
  });
});

describe("reads", () => {
  async function chunksOf(raw: string, chunkBytes: number, meanwhile?: () => void): Promise<Buffer[]> {
    const file = await workspace.openFile(parsePath(raw));
    try {
      meanwhile?.();
      const chunks: Buffer[] = [];
      for await (const chunk of file.chunks(0, chunkBytes)) chunks.push(Buffer.from(chunk));
      return chunks;
    } finally {
      await file.close();
    }
  }

  it("reads a file in chunks of at most the size asked for, to its end", async () => {
    await write("f", "0123456789".repeat(25));
    expect((await chunksOf("f", 100)).map((c) => c.length)).toEqual([100, 100, 50]);
    expect((await chunksOf("f", 250)).map((c) => c.length)).toEqual([250]);
    expect(Buffer.concat(await chunksOf("f", 7)).toString()).toBe("0123456789".repeat(25));
    await write("empty", "");
    expect(await chunksOf("empty", 100)).toEqual([]);
  });

  it("reads on past the size it was opened with when the file grew, and stops where a shrunk file ends", async () => {
    await write("grows", "a".repeat(10));
    const grown = await chunksOf("grows", 64, () => writeFileSync(path.join(root, "grows"), "b".repeat(200)));
    expect(Buffer.concat(grown).toString()).toBe("b".repeat(200));
    await write("shrinks", "c".repeat(200));
    const shrunk = await chunksOf("shrinks", 64, () => writeFileSync(path.join(root, "shrinks"), "d".repeat(5)));
    expect(Buffer.concat(shrunk).toString()).toBe("d".repeat(5));
  });
});

describe("writes", () => {
  it("replaces atomically, keeps permission bits and leaves no temp file", async () => {
    await write("x.sh", "old");
    const hostFile = path.join(root, "x.sh");
    execFileSync("chmod", ["755", hostFile]);
    const result = await write("x.sh", "new");
    expect(result.created).toBe(false);
    expect(readFileSync(hostFile, "utf8")).toBe("new");
    expect(statSync(hostFile).mode & 0o777).toBe(0o755);
    expect(readdirSync(root)).toEqual(["x.sh"]);
  });

  it("changes the version on every write and checks if_version", async () => {
    const first = await write("v.txt", "one");
    const second = await write("v.txt", "two");
    expect(second.entry.version).not.toBe(first.entry.version);
    const stale = workspace.writeFile(parsePath("v.txt"), Buffer.from("three"), { createDirs: true, mode: "create-or-replace", ifVersion: first.entry.version });
    expect(await reasonOf(stale)).toBe("CONTENT_CHANGED");
    expect(readFileSync(path.join(root, "v.txt"), "utf8")).toBe("two");
  });

  it("honours create-only and replace-only", async () => {
    await write("c.txt", "one");
    expect(await reasonOf(workspace.writeFile(parsePath("c.txt"), Buffer.from("x"), { createDirs: true, mode: "create-only" }))).toBe("ALREADY_EXISTS");
    expect(await reasonOf(workspace.writeFile(parsePath("d.txt"), Buffer.from("x"), { createDirs: true, mode: "replace-only" }))).toBe("NOT_FOUND");
    expect(await reasonOf(workspace.writeFile(parsePath("no/dir/e.txt"), Buffer.from("x"), { createDirs: false, mode: "create-or-replace" }))).toBe("NOT_FOUND");
  });

  it("reports the directories it made, parents first, by their path from the root; a write that fails removes those it made", async () => {
    mkdirSync(path.join(root, "real"));
    symlinkSync("real", path.join(root, "link"));
    const made: MadeDirectories = [];
    await workspace.writeFile(parsePath("link/new/f.txt"), Buffer.from("x"), { createDirs: true, mode: "create-only", madeDirectories: made });
    await workspace.writeFile(parsePath("real/new/deep/g.txt"), Buffer.from("x"), { createDirs: true, mode: "create-only", madeDirectories: made });
    expect(made.map((m) => m.parts)).toEqual([["real", "new"], ["real", "new", "deep"]]);
    expect(made.every((m) => m.version !== "")).toBe(true);
    const failed: MadeDirectories = [];
    expect(await reasonOf(workspace.writeFile(parsePath("a/b/c.txt"), Buffer.from("x"), { createDirs: true, mode: "replace-only", madeDirectories: failed }))).toBe("NOT_FOUND");
    expect(failed).toEqual([]);
    expect(existsSync(path.join(root, "a"))).toBe(false);

  });

  it("a move that fails removes the directories it made for its destination", async () => {
    await write("d/f.txt", "x");
    symlinkSync("d", path.join(root, "l"));
    // Into itself through the link: the parents are made inside the source, then rename(2) refuses.
    expect(await reasonOf(workspace.move(parsePath("d"), parsePath("l/new/deeper/d"), { overwrite: false, createDirs: true }))).toBe("INVALID_ARGUMENT");
    expect(readdirSync(path.join(root, "d"))).toEqual(["f.txt"]);
  });

  it("a failed write does not remove a parent it made that a concurrent makeDir has since reported as existing", async () => {
    // Different paths take different locks (tools/locks.ts): a makeDir of /a runs while a write of /a/b/c.txt is under way.
    // It finds /a, made by the write, and succeeds ("already existed"); the write then fails and unmakes its parents.
    const internals = workspace as unknown as { rmdirIfEmpty(...args: unknown[]): Promise<boolean> };
    const rmdirIfEmpty = internals.rmdirIfEmpty.bind(workspace);
    let concurrent: boolean | undefined;
    internals.rmdirIfEmpty = async (...args) => {
      concurrent ??= await workspace.makeDir(parsePath("a"), { parents: true });
      return rmdirIfEmpty(...args);
    };
    expect(await reasonOf(workspace.writeFile(parsePath("a/b/c.txt"), Buffer.from("x"), { createDirs: true, mode: "replace-only" }))).toBe("NOT_FOUND");
    expect(concurrent).toBe(false); // success: /a is there
    expect(statSync(path.join(root, "a")).isDirectory()).toBe(true); // ... and must stay
  });

  it("removes an empty directory, and leaves one with an entry, a file or nothing", async () => {
    mkdirSync(path.join(root, "empty"));
    await write("full/f.txt", "x");
    expect(await workspace.removeEmptyDirectory(parsePath("empty"))).toBe(true);
    expect(await workspace.removeEmptyDirectory(parsePath("full"))).toBe(false);
    expect(await workspace.removeEmptyDirectory(parsePath("full/f.txt"))).toBe(false);
    expect(await workspace.removeEmptyDirectory(parsePath("gone/deeper"))).toBe(false);
    expect(readdirSync(root)).toEqual(["full"]);
    expect(readdirSync(path.join(root, "full"))).toEqual(["f.txt"]);
  });

  it("sweeps temp files a crash left behind", async () => {
    mkdirSync(path.join(root, "sub"));
    writeFileSync(path.join(root, "sub", ".filetools-tmp-0123456789abcdef"), "torn");
    writeFileSync(path.join(root, "keep"), "k");
    expect(await workspace.sweepTempFiles()).toBe(1);
    expect(readdirSync(path.join(root, "sub"))).toEqual([]);
  });
});

describe("walk", () => {
  it("lists in sorted order, prunes hidden and gitignored entries, never follows symlinks", async () => {
    await write(".gitignore", "build/\n*.log\n!keep.log\n");
    await write("src/a.ts", "");
    await write("src/b.log", "");
    await write("src/keep.log", "");
    await write("build/out.js", "");
    await write(".hidden/h", "");
    symlinkSync(outside, path.join(root, "link"));
    const seen = async (options: { includeHidden: boolean; respectGitignore: boolean }) => {
      const paths: string[] = [];
      for await (const entry of workspace.walk([], { recursive: true, maxDepth: 0, ...options })) paths.push(entry.path);
      return paths;
    };
    expect(await seen({ includeHidden: false, respectGitignore: true })).toEqual(["/link", "/src", "/src/a.ts", "/src/keep.log"]);
    expect(await seen({ includeHidden: true, respectGitignore: false })).toEqual([
      "/.gitignore", "/.hidden", "/.hidden/h", "/build", "/build/out.js", "/link", "/src", "/src/a.ts", "/src/b.log", "/src/keep.log",
    ]);
  });
});

describe("closing", () => {
  it("closes the root after the calls already opening through it, and refuses later calls", async () => {
    await write("a/b.txt", "b\n");
    const reads = Array.from({ length: 50 }, () => readText("a/b.txt"));
    const closed = workspace.close();
    // Opens meanwhile would take the root's number once it is closed; a read still opening through it must not land there.
    const others = await Promise.all(Array.from({ length: 20 }, () => fsp.open(outside, "r")));
    expect(await Promise.all(reads)).toEqual(Array(50).fill("b\n"));
    await closed;
    await Promise.all(others.map((handle) => handle.close()));
    expect(await reasonOf(workspace.stat(parsePath("a/b.txt")))).toBe("CONTENT_CHANGED");
    expect(await reasonOf(workspace.stat([]))).toBe("CONTENT_CHANGED");
    expect(await reasonOf(workspace.createStaging())).toBe("CONTENT_CHANGED");
  });

  it("closes a walk's directory when the workspace closes before the walk reads the .gitignore rules above it", async () => {
    await write("sub/c.txt", "c\n");
    const open = () => readdirSync("/proc/self/fd").length;
    const before = open();
    const walking = workspace.walk(parsePath("sub"), { recursive: true, maxDepth: 0, includeHidden: false, respectGitignore: true })[Symbol.asyncIterator]().next();
    await workspace.close(); // the walk has its directory open, and has not yet reopened the root for the rules
    expect(await reasonOf(walking)).toBe("CONTENT_CHANGED");
    expect(open()).toBe(before - 1); // the root's descriptor, and nothing left of the walk
  });
});

describe("placeStaged", () => {
  it("moves each staged entry to its path: over a file or a directory found there, into directories made when missing, its mtime kept", async () => {
    await write("kept/over-a-file.txt", "old\n");
    await write("kept/over-a-directory/inside.txt", "gone\n");
    const staging = await workspace.createStaging();
    for (const [name, text] of [["0", "a\n"], ["1", "b\n"], ["2", "c\n"]]) await staging.writeSmallFile([name!], Buffer.from(text!), 0o640, 1_600_000_000);
    await workspace.placeStaged(staging, [
      { name: "0", parts: parsePath("kept/over-a-file.txt") },
      { name: "1", parts: parsePath("kept/over-a-directory") },
      { name: "2", parts: parsePath("made/on/the/way.txt") },
    ]);
    await staging.discard();
    expect(await readText("kept/over-a-file.txt")).toBe("a\n");
    expect(await readText("kept/over-a-directory")).toBe("b\n");
    expect(await readText("made/on/the/way.txt")).toBe("c\n");
    expect(statSync(path.join(root, "made/on/the/way.txt")).mode & 0o777).toBe(0o640);
    expect(statSync(path.join(root, "made/on/the/way.txt")).mtimeMs).toBe(1_600_000_000_000);
    expect(readdirSync(root).sort()).toEqual(["kept", "made"]);
  });
});
