// The one-link rule after the read, by name: a descriptor opened through a
// hard link to an outside file whose inside name was removed has one link,
// and is still not the name's. And the rule at open, made deterministic:
// node:fs is wrapped so that
// the name is swapped exactly between the lstat and the open, and removed
// exactly between the open and the fstat. A hard link to an outside file
// opened that way has one link again at the fstat; the readers check the
// descriptor against the lstat of the name and never use its bytes. A name
// replaced by another lone file (an editor's save) is opened again and read.
// The search workers check once, after the first read: the same swaps, and a
// FIFO swapped in, never get their bytes searched.
import { execFileSync } from "node:child_process";
import { closeSync, linkSync, mkdirSync, mkdtempSync, openSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { packSeekable } from "../snapshots/seekable.js";
import { Workspace } from "./workspace.js";
import { isLoneByName, isLoneFile } from "./lone-file.js";
import * as fs from "node:fs";
import { compilePattern } from "../search/pattern.js";
import runSearchTask, { FILE_KINDS, newLease } from "../search/worker.js";
import { checkHeldRead } from "./held-open.js";

/** Runs once, when the file named `name` is opened: `beforeOpen` just before the open, `beforeFstat` just before the fstat of what it opened. */
const hook: { name: string | null; beforeOpen?: () => void; beforeFstat?: () => void; fd?: number } = { name: null };
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  const openSync = ((file: string, ...rest: unknown[]) => {
    if (!hook.name || !String(file).endsWith(`/${hook.name}`)) return (fs.openSync as (...args: unknown[]) => number)(file, ...rest);
    hook.name = null;
    hook.beforeOpen?.();
    hook.fd = (fs.openSync as (...args: unknown[]) => number)(file, ...rest);
    return hook.fd;
  }) as typeof fs.openSync;
  const fstatSync = ((fd: number, ...rest: unknown[]) => {
    if (fd === hook.fd) {
      hook.fd = undefined;
      hook.beforeFstat?.();
    }
    return (fs.fstatSync as (...args: unknown[]) => unknown)(fd, ...rest);
  }) as typeof fs.fstatSync;
  return { ...fs, openSync, fstatSync, default: { ...fs, openSync, fstatSync } };
});

const SECRET = "OUTSIDE-SECRET-c4d2";
let base: string;
let root: string;
let secret: string;
let workspace: Workspace;

beforeEach(async () => {
  base = mkdtempSync(path.join(tmpdir(), "lone-file-"));
  root = path.join(base, "root");
  mkdirSync(root);
  secret = path.join(base, "secret.txt");
  writeFileSync(secret, `${SECRET}\n`);
  writeFileSync(path.join(root, "leaf"), "plain\n");
  workspace = await Workspace.open("w", root, false);
});

afterEach(() => {
  hook.name = null;
  workspace.close();
  execFileSync("rm", ["-rf", base]); // a deep tree: GNU rm walks by descriptors
});

const leaf = () => path.join(root, "leaf");
/** Opened through a hard link to the outside file, the inside name removed before the fstat: one link again. */
function linkedThenRemoved(): void {
  hook.name = "leaf";
  hook.beforeOpen = () => {
    unlinkSync(leaf());
    linkSync(secret, leaf());
  };
  hook.beforeFstat = () => unlinkSync(leaf());
}
/** Replaced by another lone file between the lstat and the open. */
function replaced(): void {
  hook.name = "leaf";
  hook.beforeOpen = () => {
    writeFileSync(path.join(root, "new"), "saved by an editor\n");
    renameSync(path.join(root, "new"), leaf());
  };
  hook.beforeFstat = undefined;
}

async function packed(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of packSeekable(workspace, { key: "w/t.tar.gz", level: 6, scratchDir: base }).bytes) chunks.push(Buffer.from(chunk));
  return gunzipSync(Buffer.concat(chunks)).toString("latin1");
}

it("Read: a name opened as a hard link to an outside file and removed before the fstat is not read", async () => {
  linkedThenRemoved();
  await expect(workspace.openFile(["leaf"])).rejects.toMatchObject({ reason: "NOT_FOUND" }); // looked up again: gone
});

it("the packer: the same file is not packed", async () => {
  linkedThenRemoved();
  const tar = await packed();
  expect(tar).not.toContain(SECRET);
  expect(tar).not.toContain("leaf");
});

it("Read and the packer: a name replaced by another lone file meanwhile is opened again and read", async () => {
  replaced();
  const file = await workspace.openFile(["leaf"]);
  try {
    expect((await file.readAll()).toString()).toBe("saved by an editor\n");
  } finally {
    file.close();
  }
  writeFileSync(leaf(), "plain\n");
  replaced();
  expect(await packed()).toContain("saved by an editor\n");
});

it("by name: a descriptor opened through a hard link whose name here was removed (one link again) or moved is not lone; one still named is", () => {
  const dir = openSync(root, "r");
  linkSync(secret, path.join(root, "linked"));
  const fds = ["leaf", "linked", "moved"].map((name) => (name === "moved" ? openSync(path.join(root, "leaf"), "r") : openSync(path.join(root, name), "r")));
  try {
    expect(isLoneByName(fds[0]!, dir, "leaf")).toBe(true);
    unlinkSync(path.join(root, "linked"));
    expect(isLoneFile(fds[1]!)).toBe(true); // the link count alone is fooled
    expect(isLoneByName(fds[1]!, dir, "linked")).toBe(false);
    renameSync(path.join(root, "leaf"), path.join(base, "elsewhere"));
    expect(isLoneByName(fds[2]!, dir, "leaf")).toBe(false);
  } finally {
    for (const fd of [...fds, dir]) closeSync(fd);
  }
});

it("by name, deeper than /proc shows a path for: the name looked up once the lock is taken", () => {
  // 24 directories of 200 bytes: past the 4,095 bytes /proc/self/fd/N can show.
  let dir = openSync(root, "r");
  for (let i = 0; i < 24; i++) {
    mkdirSync(`/proc/self/fd/${dir}/${"d".repeat(200)}`);
    const next = openSync(`/proc/self/fd/${dir}/${"d".repeat(200)}`, "r");
    closeSync(dir);
    dir = next;
  }
  writeFileSync(`/proc/self/fd/${dir}/deep`, "deep\n");
  const fd = openSync(`/proc/self/fd/${dir}/deep`, "r");
  try {
    expect(isLoneByName(fd, dir, "deep")).toBe(true);
    linkSync(`/proc/self/fd/${dir}/deep`, path.join(base, "outside-name"));
    unlinkSync(`/proc/self/fd/${dir}/deep`);
    expect(isLoneFile(fd)).toBe(true);
    expect(isLoneByName(fd, dir, "deep")).toBe(false);
  } finally {
    closeSync(fd);
    closeSync(dir);
  }
});

// The search workers: one check after the first read (checkHeldRead).

/** Scans the root's `names` as one search task, as a pool worker does (run here, on this thread, so node:fs is the hooked one). */
function searchTask(names: string[], needle: string) {
  const dir = openSync(root, "r");
  try {
    const result = runSearchTask({
      pattern: compilePattern(needle, { fixedStrings: true, caseInsensitive: false }),
      options: { mode: "content", before: 0, after: 0, limit: 100 },
      foundBefore: 0,
      running: [],
      progress: new SharedArrayBuffer(4),
      maxFileSize: 0,
      files: { dirFds: Int32Array.from(names, () => dir), names: names.join("\0") },
      paths: names.map((name) => `/${name}`).join("\0"),
      lease: newLease().buffer as SharedArrayBuffer,
    });
    if (result === "pong") throw new Error("not a search task");
    return names.map((_, i) => ({ kind: FILE_KINDS[result.kinds[i]!], hit: result.hits.some((hit) => hit.index === i) }));
  } finally {
    closeSync(dir);
  }
}

it("search workers: a name opened as a hard link to an outside file and removed before the check is not searched", () => {
  linkedThenRemoved();
  expect(searchTask(["leaf"], SECRET)).toEqual([{ kind: "skipped", hit: false }]);
});

it("search workers: nor a name removed and made again as a lone file, nor one replaced (its inode has no link left)", () => {
  hook.name = "leaf";
  hook.beforeOpen = () => {
    unlinkSync(leaf());
    linkSync(secret, leaf());
  };
  hook.beforeFstat = () => {
    unlinkSync(leaf());
    writeFileSync(leaf(), `${SECRET}\n`); // a lone file by that name now, but not the inode opened
  };
  expect(searchTask(["leaf"], SECRET)).toEqual([{ kind: "skipped", hit: false }]);
  replaced();
  hook.beforeFstat = () => {
    writeFileSync(path.join(root, "other"), "x\n");
    renameSync(path.join(root, "other"), leaf());
  };
  expect(searchTask(["leaf"], "saved")).toEqual([{ kind: "skipped", hit: false }]);
});

it("search workers: a FIFO swapped in for a walked file is skipped without blocking; a plain file beside it is searched", () => {
  hook.name = "leaf";
  hook.beforeOpen = () => {
    unlinkSync(leaf());
    execFileSync("mkfifo", [leaf()]);
  };
  hook.beforeFstat = undefined;
  writeFileSync(path.join(root, "plain"), "plain\n");
  expect(searchTask(["leaf", "plain"], "plain")).toEqual([
    { kind: "skipped", hit: false },
    { kind: "text", hit: true },
  ]);
});

it("search workers: a file whose links changed before the open passes on its fstat alone; one changed about the open costs an lstat of its name", () => {
  const dir = openSync(root, "r");
  const fd = openSync(leaf(), "r");
  const lstat = vi.spyOn(fs, "lstatSync");
  try {
    const now = Date.now();
    expect(checkHeldRead(fd, dir, "leaf", now + 10_000)).toEqual({ size: 6 });
    expect(lstat).not.toHaveBeenCalled();
    expect(checkHeldRead(fd, dir, "leaf", now)).toEqual({ size: 6 });
    expect(lstat).toHaveBeenCalledTimes(1);
    linkSync(leaf(), path.join(base, "second"));
    expect(checkHeldRead(fd, dir, "leaf", now)).toEqual({ skipped: "hard-linked" });
  } finally {
    lstat.mockRestore();
    closeSync(fd);
    closeSync(dir);
  }
});
