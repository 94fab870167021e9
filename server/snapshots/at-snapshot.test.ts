// A snapshot's tree (at-snapshot.ts) over a real packed tarball in a real
// file:// store: a table of contents that names what no request could (a
// "..", a "." or empty component, a name twice, an entry without its
// directory) is DATA_LOSS before anything is served; links loop or leave the
// tree with the live resolver's answers; a file closed (a call cancelled)
// ends its reads.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileToolsError } from "../errors.js";
import { parsePath } from "../workspace/paths.js";
import { Workspace } from "../workspace/workspace.js";
import { SnapshotTree } from "./at-snapshot.js";
import type { Contents } from "./contents.js";
import { FileStore } from "./file-store.js";
import type { Manifest } from "./manifest.js";
import { packSeekable } from "./seekable.js";

const ID = "20261206T120000000Z-0a0b0c0d";
let base: string;
let store: FileStore;
let contents: Contents;
const manifest = { id: ID, createdAt: "2026-12-06T12:00:00.000Z" } as Manifest;

beforeEach(async () => {
  base = mkdtempSync(path.join(tmpdir(), "at-snapshot-test-"));
  const root = path.join(base, "root");
  mkdirSync(path.join(root, "dir"), { recursive: true });
  writeFileSync(path.join(root, "dir/a.txt"), "alpha\n");
  writeFileSync(path.join(root, "b.txt"), "beta\n".repeat(1000));
  symlinkSync("loop2", path.join(root, "loop1"));
  symlinkSync("loop1", path.join(root, "loop2"));
  symlinkSync("dir/../..", path.join(root, "up"));
  mkdirSync(path.join(base, "store"));
  store = new FileStore(path.join(base, "store"));
  const workspace = await Workspace.open("w", root, false);
  try {
    const packed = packSeekable(workspace, { key: `w/${ID}.tar.gz`, level: 6, scratchDir: base });
    await store.put(`w/${ID}.tar.gz`, packed.bytes);
    contents = packed.contents("w", ID);
  } finally {
    workspace.close();
  }
});

afterEach(() => rmSync(base, { recursive: true, force: true }));

/** The table of contents with its first file's path (or a directory's) replaced. */
function withPath(change: (c: Contents) => void): Contents {
  const copy = structuredClone(contents);
  change(copy);
  return copy;
}

async function reason(promise: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof promise === "function" ? promise() : promise);
  } catch (error) {
    if (error instanceof FileToolsError) return error.reason;
    throw error;
  }
  return "OK";
}

describe("a table of contents that names what no request could", () => {
  it.each([
    ["a '..' component", (c: Contents) => void (c.files.paths[0] = "/dir/../escape")],
    ["a '.' component", (c: Contents) => void (c.files.paths[0] = "/./x")],
    ["an empty component", (c: Contents) => void (c.files.paths[0] = "/dir//x")],
    ["a relative path", (c: Contents) => void (c.files.paths[0] = "dir/x")],
    [
      "a name twice",
      (c: Contents) => {
        c.directories.paths.push("/dir");
        c.directories.modes.push(0o755);
        c.directories.mtimes.push(0);
      },
    ],
    ["an entry without its directory", (c: Contents) => void (c.directories.paths[0] = "/other")],
  ])("%s is DATA_LOSS", async (_, change) => {
    expect(await reason(() => SnapshotTree.of(store, manifest, withPath(change)))).toBe("DATA_LOSS");
  });

  it("the untouched one serves", async () => {
    const source = SnapshotTree.of(store, manifest, contents).source();
    const file = await source.openFile(parsePath("/dir/a.txt"));
    expect((await file.readAt(0, 100)).toString()).toBe("alpha\n");
    file.close();
  });
});

describe("links", () => {
  it("a loop is INVALID_PATH, a climb out PATH_ESCAPES_WORKSPACE, as live", async () => {
    const source = SnapshotTree.of(store, manifest, contents).source();
    expect(await reason(source.openFile(parsePath("/loop1")))).toBe("INVALID_PATH");
    expect(await reason(source.stat(parsePath("/up/x")))).toBe("PATH_ESCAPES_WORKSPACE");
    expect((await source.stat(parsePath("/up"))).type).toBe("symlink");
  });
});

describe("cancellation", () => {
  it("a file's reads end when its call's signal aborts, and when it is closed", async () => {
    const controller = new AbortController();
    const source = SnapshotTree.of(store, manifest, contents).source(controller.signal);
    const file = await source.openFile(parsePath("/b.txt"));
    controller.abort();
    await expect(file.readAt(100, 10)).rejects.toThrow();
    const other = await SnapshotTree.of(store, manifest, contents).source().openFile(parsePath("/b.txt"));
    other.close();
    await expect(other.readAt(100, 10)).rejects.toThrow();
  });
});
