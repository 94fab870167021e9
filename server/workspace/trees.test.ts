// Hostile trees: any depth, names that are not UTF-8, links to the root,
// trailing slashes, hard links gained after opening (issue 10, items 9, 10, 13, 14).
import { execFileSync } from "node:child_process";
import { closeSync, constants, linkSync, mkdirSync, openSync, mkdtempSync, readdirSync, renameSync, symlinkSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileToolsError } from "../errors.js";
import { packSeekable } from "../snapshots/seekable.js";
import { MAX_DEPTH } from "./limits.js";
import { displayPath, parseFilePath, parsePath } from "./paths.js";
import { bytesOfName, escapeName, nameFromBytes, unescapeName } from "./names.js";
import { descriptorsUnder } from "../../test/support/process-health.js";
import { Workspace } from "./workspace.js";
import { deepChain as deepChainWith, reasonOf as reasonOfCall } from "../../test/support/trees.js";

let base: string;
let root: string;
let workspace: Workspace;

beforeEach(async () => {
  base = mkdtempSync(path.join(tmpdir(), "trees-test-"));
  root = path.join(base, "root");
  mkdirSync(root);
  workspace = await Workspace.open("trees", root, false);
});

afterEach(() => {
  workspace.close();
  execFileSync("rm", ["-rf", base]); // deep trees: GNU rm walks by descriptors
});

const reasonOf = (call: Promise<unknown> | (() => unknown)) => reasonOfCall(base, call);

/** Descriptors open in the test's directories (worker threads that come and go hold others: their event loops'). */
const openDescriptors = () => descriptorsUnder(base).length;

const deepChain = (top: string, depth: number) => deepChainWith(top, depth, { name: "bottom.txt", content: "bottom\n" });

describe("names that are not UTF-8", () => {
  it("map to held strings and back byte for byte, shown as \\xHH and \\\\", () => {
    const raw = Buffer.from([0x62, 0xff, 0x5c, 0xc3, 0xa9, 0xed, 0xa0, 0x80, 0xf0, 0x9f, 0x98, 0x80]);
    const held = nameFromBytes(raw);
    expect(bytesOfName(held).equals(raw)).toBe(true);
    expect(escapeName(held)).toBe("b\\xff\\\\é\\xed\\xa0\\x80😀");
    expect(unescapeName(escapeName(held))).toBe(held);
    expect(unescapeName("\\xc3\\xa9")).toBe("é"); // decoded bytes read again: one name, one spelling
  });

  it("request paths decode escapes; any other backslash, or an escaped '/', NUL or control, is INVALID_PATH", async () => {
    expect(parsePath("/d\\xfe/b\\xff").map((p) => bytesOfName(p).toString("hex"))).toEqual(["64fe", "62ff"]);
    expect(parsePath("/a\\\\b")).toEqual(["a\\b"]);
    for (const bad of ["/a\\b", "/a\\x2f", "/a\\x00", "/a\\x0a", "/a\\xZZ", "/a\\"]) expect(await reasonOf(() => parsePath(bad))).toBe("INVALID_PATH");
  });

  it("are listed escaped and flagged, searched, statted and read through the shown path, and packed with their bytes", async () => {
    writeFileSync(Buffer.from(root + "/b\xff", "latin1"), "needle\n");
    mkdirSync(Buffer.from(root + "/d\xfe", "latin1"));
    writeFileSync(Buffer.from(root + "/d\xfe/in", "latin1"), "needle too\n");
    const listed = [];
    for await (const entry of workspace.walk([], { recursive: true, maxDepth: 0, includeHidden: true, respectGitignore: true })) listed.push([entry.path, entry.escaped]);
    expect(listed).toEqual([["/b\\xff", true], ["/d\\xfe", true], ["/d\\xfe/in", true]]);
    const found: string[] = [];
    for await (const batch of workspace.heldFiles([], { includeHidden: true, respectGitignore: true, batchFiles: () => 10 })) {
      found.push(...batch.paths);
      batch.release();
    }
    expect(found).toEqual(["/b\\xff", "/d\\xfe/in"]);
    const { listEntries } = await import("../tools/list.js");
    const below = [];
    for await (const entry of listEntries(workspace, "/d\\xfe", { pattern: "i*", recursive: true }, new AbortController().signal)) below.push(entry.path);
    expect(below).toEqual(["/d\\xfe/in"]); // the pattern sees the path relative to the listed (escaped) directory
    const file = await workspace.openFile(parseFilePath("/d\\xfe/in"));
    expect((await file.readAt(0, 100)).toString()).toBe("needle too\n");
    file.close();
    const tarball: Buffer[] = [];
    for await (const chunk of packSeekable(workspace, { key: "w/t.tar.gz", level: 6, scratchDir: tmpdir() }).bytes) tarball.push(Buffer.from(chunk));
    const tarFile = path.join(base, "t.tar.gz");
    writeFileSync(tarFile, Buffer.concat(tarball));
    const out = path.join(base, "out");
    mkdirSync(out);
    execFileSync("tar", ["-xzf", tarFile, "-C", out]);
    expect(readdirSync(out, { encoding: "buffer" }).map((n) => n.toString("hex")).sort()).toEqual(["62ff", "64fe"]);
    expect(readdirSync(Buffer.from(out + "/d\xfe", "latin1"))).toEqual(["in"]);
  });
});

describe("deep trees", () => {
  it("a 4,000-deep tree is walked, searched, packed (refused clearly: past the limits) and deleted, with a bounded number of descriptors", async () => {
    deepChain(path.join(root, "deep"), 4000);
    const before = openDescriptors();
    let entries = 0;
    let peak = 0;
    for await (const entry of workspace.walk([], { recursive: true, maxDepth: 0, includeHidden: true, respectGitignore: true })) {
      entries++;
      if (entries % 500 === 0) peak = Math.max(peak, openDescriptors() - before);
      expect(entry.parts.length).toBe(entries);
    }
    expect(entries).toBe(4002); // deep, 4000 x, bottom.txt
    expect(peak).toBeLessThan(100);
    const files: string[] = [];
    for await (const batch of workspace.heldFiles([], { includeHidden: true, respectGitignore: true, batchFiles: () => 48 })) {
      files.push(...batch.paths);
      batch.release();
    }
    expect(files).toHaveLength(1);
    expect(files[0]!.endsWith("/x/bottom.txt")).toBe(true);
    const packing = (async () => {
      for await (const chunk of packSeekable(workspace, { key: "w/t.tar.gz", level: 6, scratchDir: tmpdir() }).bytes) void chunk;
    })();
    expect(await reasonOf(packing)).toBe("QUOTA_EXCEEDED");
    expect(openDescriptors()).toBe(before);
    expect(await workspace.remove(["deep"], { recursive: true })).toBe(true);
    expect(existsSync(path.join(root, "deep"))).toBe(false);
    expect(openDescriptors()).toBe(before);
  }, 60_000);

  it("directories reopened on the way back up (past the window of held ones) yield the files after the subdirectory, searched and packed", async () => {
    // x/ then y.txt at every level: y.txt is reached only after the walk comes back from x/
    let fd = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY);
    for (let i = 0; i < 200; i++) {
      writeFileSync(`/proc/self/fd/${fd}/y.txt`, `level ${i}\n`);
      mkdirSync(`/proc/self/fd/${fd}/x`);
      const next = openSync(`/proc/self/fd/${fd}/x`, constants.O_RDONLY | constants.O_DIRECTORY);
      closeSync(fd);
      fd = next;
    }
    closeSync(fd);
    const searched: string[] = [];
    for await (const batch of workspace.heldFiles([], { includeHidden: true, respectGitignore: true, batchFiles: () => 7 })) {
      searched.push(...batch.paths);
      batch.release();
    }
    expect(searched).toHaveLength(200);
    expect(searched[0]).toBe("/" + Array(199).fill("x").join("/") + "/y.txt");
    expect(searched.at(-1)).toBe("/y.txt");
    const tarball: Buffer[] = [];
    const packed = packSeekable(workspace, { key: "w/t.tar.gz", level: 6, scratchDir: tmpdir() });
    for await (const chunk of packed.bytes) tarball.push(Buffer.from(chunk));
    expect(packed.fileCount).toBe(200);
    const out = path.join(base, "out");
    mkdirSync(out);
    writeFileSync(path.join(base, "t.tar.gz"), Buffer.concat(tarball));
    execFileSync("tar", ["-xzf", path.join(base, "t.tar.gz"), "-C", out]);
    expect(execFileSync("sh", ["-c", `cd "${out}" && find . -name y.txt | wc -l && cat y.txt`], { encoding: "utf8" })).toBe("200\nlevel 0\n");
  });

  it("a move that would take a subtree past the depth limit is refused and changes nothing; a shallower one is fine", async () => {
    deepChain(path.join(root, "a"), MAX_DEPTH - 10);
    deepChain(path.join(root, "b"), 20);
    expect(await reasonOf(workspace.move(["b"], [...Array(MAX_DEPTH - 10).fill("x").map((_, i) => (i === 0 ? "a" : "x")), "b"], { overwrite: false, createDirs: false }))).toBe(
      "INVALID_PATH",
    );
    expect(existsSync(path.join(root, "b", "x"))).toBe(true);
    await workspace.move(["b"], ["a", "b"], { overwrite: false, createDirs: false });
    expect(existsSync(path.join(root, "a", "b", "x"))).toBe(true);
    expect(await reasonOf(workspace.makeDir(Array(MAX_DEPTH + 1).fill("m"), { parents: true }))).toBe("INVALID_PATH");
    expect(existsSync(path.join(root, "m"))).toBe(false);
  });
});

describe("paths that name the root, and trailing slashes", () => {
  it("a link to the root given to a write is IS_A_DIRECTORY and creates nothing; a listing through it lists the root", async () => {
    symlinkSync(".", path.join(root, "rl"));
    mkdirSync(path.join(root, "sub"));
    symlinkSync("..", path.join(root, "sub", "up"));
    for (const target of [["rl"], ["sub", "up"]]) {
      for (const mode of ["create-or-replace", "create-only", "replace-only"] as const) {
        expect(await reasonOf(workspace.writeFile(target, Buffer.from("x"), { createDirs: true, mode }))).toBe("IS_A_DIRECTORY");
      }
      expect(await reasonOf(workspace.appendFile(target, Buffer.from("x"), { createDirs: true }))).toBe("IS_A_DIRECTORY");
      expect(await reasonOf(workspace.openFile(target))).toBe("IS_A_DIRECTORY");
    }
    expect(existsSync(path.join(root, "undefined"))).toBe(false);
    const names: string[] = [];
    for await (const entry of workspace.walk(["rl"], { recursive: false, maxDepth: 0, includeHidden: true, respectGitignore: false })) names.push(entry.path);
    expect(names).toEqual(["/rl/rl", "/rl/sub"]);
  });

  it("a file named with a trailing '/' or '/.' is NOT_A_DIRECTORY, never the file", async () => {
    writeFileSync(path.join(root, "file.txt"), "content\n");
    for (const raw of ["file.txt/", "file.txt/.", "/file.txt//"]) {
      const parts = parsePath(raw);
      expect(displayPath(parts)).toBe("/file.txt");
      expect(await reasonOf(workspace.stat(parts))).toBe("NOT_A_DIRECTORY");
      expect(await reasonOf(workspace.openFile(parts))).toBe("NOT_A_DIRECTORY");
      expect(await reasonOf(workspace.writeFile(parts, Buffer.from("x"), { createDirs: false, mode: "create-or-replace" }))).toBe("NOT_A_DIRECTORY");
      expect(await reasonOf(workspace.remove(parts, { recursive: true }))).toBe("NOT_A_DIRECTORY");
      expect(await reasonOf(workspace.move(parts, ["other"], { overwrite: true, createDirs: false }))).toBe("NOT_A_DIRECTORY");
    }
    expect(await reasonOf(workspace.writeFile(parsePath("new.txt/"), Buffer.from("x"), { createDirs: false, mode: "create-or-replace" }))).toBe("NOT_A_DIRECTORY");
    mkdirSync(path.join(root, "dir"));
    expect((await workspace.stat(parsePath("dir/"))).type).toBe("directory");
  });

  it("moving a directory into itself through a link is INVALID_ARGUMENT", async () => {
    mkdirSync(path.join(root, "a"));
    symlinkSync("a", path.join(root, "l"));
    expect(await reasonOf(workspace.move(["a"], ["l", "inner"], { overwrite: false, createDirs: false }))).toBe("INVALID_ARGUMENT");
  });
});

describe("one hard-link rule, checked after the read", () => {
  it("a file that gains a hard link after it was opened yields no bytes", async () => {
    writeFileSync(path.join(root, "f.txt"), "inside\n");
    const file = await workspace.openFile(["f.txt"]);
    linkSync(path.join(root, "f.txt"), path.join(base, "outside-link"));
    expect(await reasonOf(file.readAt(0, 100))).toBe("PATH_ESCAPES_WORKSPACE");
    file.close();
  });

  it("a hard-linked .gitignore is not read (its rules could be another file's)", async () => {
    writeFileSync(path.join(base, "outside-rules"), "secret*\n");
    linkSync(path.join(base, "outside-rules"), path.join(root, ".gitignore"));
    writeFileSync(path.join(root, "secret.txt"), "x");
    const names: string[] = [];
    for await (const entry of workspace.walk([], { recursive: true, maxDepth: 0, includeHidden: false, respectGitignore: true })) names.push(entry.path);
    expect(names).toEqual(["/secret.txt"]);
    renameSync(path.join(root, ".gitignore"), path.join(base, "moved"));
  });
});

describe("errors the disk can cause", () => {
  it("every errno a disk, a shell or a race can produce has a reason other than INTERNAL, and the message names the workspace path only", async () => {
    const { translateErrno } = await import("./errno.js");
    const codes = ["ENOENT", "EEXIST", "ENOTDIR", "EISDIR", "ENOTEMPTY", "ENAMETOOLONG", "ELOOP", "EILSEQ", "ENXIO", "ENODEV", "EINVAL", "EXDEV", "ENOSPC", "EDQUOT", "EFBIG", "EMLINK", "EOVERFLOW", "EACCES", "EPERM", "EROFS", "ETXTBSY", "EIO", "EBUSY", "EAGAIN", "ESTALE", "EMFILE", "ENFILE", "ENOMEM", "ENOTCONN"];
    for (const code of codes) {
      const error = translateErrno(Object.assign(new Error(`${code}: /host/secret/path`), { code }), "/a.txt") as FileToolsError;
      expect(error, code).toBeInstanceOf(FileToolsError);
      expect(error.reason, code).not.toBe("INTERNAL");
      expect(error.message).toContain("/a.txt");
      expect(error.message).not.toContain("/host/");
    }
    const reasons = Object.fromEntries(["EACCES", "EPERM", "EROFS", "EIO"].map((code) => [code, (translateErrno(Object.assign(new Error(), { code }), "/x") as FileToolsError).reason]));
    expect(reasons).toEqual({ EACCES: "ACCESS_DENIED", EPERM: "ACCESS_DENIED", EROFS: "ACCESS_DENIED", EIO: "IO_ERROR" });
  });
});
