// Issue 25 item 7, through a real daemon: an archive imported into a
// directory stays in it, whatever links earlier imports, restores, calls or
// a shell left there. A symbolic link may lead to the import directory itself
// or below it, never out of it (not even to come back), and a link already
// there that stayed in it must not come to leave it. A refusal is
// UNSAFE_ARCHIVE, names workspace paths only, and changes nothing.
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { tree } from "../support/trees.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTar, type Member } from "../support/tar.js";
import { expectError, forbidHostPath, startDaemon, type Daemon } from "./daemon.js";


const link = (name: string, linkname: string): Member => ({ name, type: "symlink", linkname });

let d: Daemon;
let bound: string;
beforeAll(async () => {
  bound = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-importdir-bound-")));
  d = await startDaemon({ args: ["--log-level", "error"], binds: { bound } });
  forbidHostPath(d.dataDir);
});
afterAll(async () => {
  await d.stop();
  rmSync(bound, { recursive: true, force: true });
});

async function importInto(workspace: string, target: string, members: Member[]): Promise<void> {
  const bytes = await makeTar(members);
  async function* requests() {
    yield { event: { case: "header" as const, value: { workspace, path: target } } };
    yield { event: { case: "chunk" as const, value: { data: bytes } } };
  }
  await d.client.workspaces.importArchive(requests());
}

/** The import is refused with UNSAFE_ARCHIVE, its message names no host path (and `names`, when given), and the workspace is as it was. */
async function refused(workspace: string, target: string, members: Member[], root = d.hostDir(workspace), names?: RegExp): Promise<void> {
  const before = tree(root);
  const error = await expectError(importInto(workspace, target, members), "FAILED_PRECONDITION", "UNSAFE_ARCHIVE");
  expect(error.message).not.toContain(root);
  if (names) expect(error.message).toMatch(names);
  expect(tree(root)).toEqual(before);
}

/** A workspace with sub/neighbor/secret.txt beside the import directory sub/dir. */
async function workspaceWithNeighbour(workspace: string): Promise<string> {
  await d.client.workspaces.createWorkspace({ workspace });
  const root = d.hostDir(workspace);
  mkdirSync(path.join(root, "sub", "neighbor"), { recursive: true });
  mkdirSync(path.join(root, "sub", "dir"));
  writeFileSync(path.join(root, "sub", "neighbor", "secret.txt"), "neighbour's secret\n");
  return root;
}

describe("links left by an earlier import", () => {
  it("e -> . into sub/dir, then l -> e/.. or n -> e/../neighbor/secret.txt is refused (the issue's case)", async () => {
    const root = await workspaceWithNeighbour("chained");
    await importInto("chained", "sub/dir", [link("e", ".")]);
    await refused("chained", "sub/dir", [link("l", "e/..")], root, /points outside the import directory \/sub\/dir/);
    await refused("chained", "sub/dir", [link("n", "e/../neighbor/secret.txt")]);
    // With a file beside it: the whole archive is refused, the file is not there either.
    await refused("chained", "sub/dir", [{ name: "ok.txt", content: "ok\n" }, link("n", "e/../neighbor/secret.txt")]);
    // Links that stay in the directory through e are fine.
    await importInto("chained", "sub/dir", [link("ok", "e/e/x"), link("self", "e")]);
    expect(readlinkSync(path.join(root, "sub/dir/ok"))).toBe("e/e/x");
  });

  it("the same pair at the workspace root is refused as before", async () => {
    await d.client.workspaces.createWorkspace({ workspace: "at-root" });
    await importInto("at-root", "", [link("e", ".")]);
    await refused("at-root", "", [link("l", "e/..")], d.hostDir("at-root"), /outside the workspace/);
  });

  it("a link to the import directory itself is fine; one that leaves it to come back is not", async () => {
    const root = await workspaceWithNeighbour("itself");
    await importInto("itself", "sub/dir", [link("here", "."), { name: "a/x.txt", content: "x\n" }, link("a/up", "..")]);
    expect(readlinkSync(path.join(root, "sub/dir/a/up"))).toBe("..");
    await refused("itself", "sub/dir", [link("back", "../dir")]);
    await refused("itself", "sub/dir", [link("back", "a/up/..")]);
    await refused("itself", "sub/dir", [link("back", "here/../dir/a")]);
  });

  it("a chain of several links, each imported on its own, that leads to a parent", async () => {
    const root = await workspaceWithNeighbour("chain");
    await importInto("chain", "sub/dir", [link("c", ".")]);
    await importInto("chain", "sub/dir", [link("b", "c")]);
    await importInto("chain", "sub/dir", [link("a", "b/b/c")]);
    await importInto("chain", "sub/dir", [{ name: "deep/er/file.txt", content: "f\n" }, link("deep/er/top", "../../a")]);
    await refused("chain", "sub/dir", [link("l", "a/..")]);
    await refused("chain", "sub/dir", [link("deep/m", "er/top/b/../neighbor/secret.txt")]);
    await refused("chain", "sub/dir", [link("deep/er/n", "top/c/../..")]);
    // And in one archive (refused by the archive's own links already).
    await refused("chain", "sub/dir", [link("x", "."), link("y", "x"), link("z", "y/..")]);
    expect(tree(path.join(root, "sub/neighbor"))).toEqual({ "secret.txt": createHash("sha256").update("neighbour's secret\n").digest("hex") });
  });

  it("a link already in the import directory (y -> e/..) must not come to leave it once the archive adds e -> .", async () => {
    await workspaceWithNeighbour("existing");
    await importInto("existing", "sub/dir", [link("y", "e/..")]);
    await refused("existing", "sub/dir", [link("e", ".")], d.hostDir("existing"), /the link \/sub\/dir\/y already in the workspace point outside the import directory \/sub\/dir/);
    // A link outside the import directory is held to the workspace only: sub/z -> dir/e/.. now leads to sub, still inside.
    symlinkSync("dir/f/..", path.join(d.hostDir("existing"), "sub", "z"));
    await importInto("existing", "sub/dir", [link("f", ".")]);
  });
});

describe("links left by restores, calls and a shell", () => {
  it("a link restored from a snapshot", async () => {
    const root = await workspaceWithNeighbour("restored");
    const { run } = await d.client.workspaces.startRun({ workspace: "restored", restore: "NONE" });
    await importInto("restored", "sub/dir", [link("e", ".")]);
    const { snapshot } = await d.client.workspaces.finishRun({ workspace: "restored", runId: run!.id });
    rmSync(path.join(root, "sub", "dir", "e"));
    await d.client.workspaces.restoreSnapshot({ workspace: "restored", snapshotId: snapshot!.id });
    expect(readlinkSync(path.join(root, "sub/dir/e"))).toBe(".");
    await refused("restored", "sub/dir", [link("l", "e/..")]);
    await refused("restored", "sub/dir", [link("n", "e/../neighbor/secret.txt")]);
  });

  it("a link moved into the import directory by Move", async () => {
    await workspaceWithNeighbour("moved");
    // sub/up -> .. leads to the root from sub: inside the workspace, accepted where it was imported.
    await importInto("moved", "", [link("sub/up", "..")]);
    await d.client.files.move({ workspace: "moved", source: "sub/up", destination: "sub/dir/up" });
    await refused("moved", "sub/dir", [link("n", "up/neighbor/secret.txt")]);
    await refused("moved", "sub/dir", [link("n", "up")]);
  });

  it("into a directory reached through a link: the directory it leads to is the one held to", async () => {
    const root = await workspaceWithNeighbour("via");
    symlinkSync("sub", path.join(root, "shortcut"));
    await importInto("via", "shortcut/dir", [link("e", ".")]);
    expect(readlinkSync(path.join(root, "sub/dir/e"))).toBe(".");
    await refused("via", "shortcut/dir", [link("l", "e/..")], root, /the import directory \/sub\/dir/);
  });

  it("a shell's links in a bound workspace: relative, absolute to inside, and to the import directory's parent", async () => {
    mkdirSync(path.join(bound, "sub", "dir"), { recursive: true });
    mkdirSync(path.join(bound, "sub", "neighbor"));
    writeFileSync(path.join(bound, "sub", "neighbor", "secret.txt"), "neighbour's secret\n");
    symlinkSync(".", path.join(bound, "sub", "dir", "e"));
    symlinkSync(path.join(bound, "sub", "dir"), path.join(bound, "sub", "dir", "abs"));
    symlinkSync("../..", path.join(bound, "sub", "dir", "top"));
    await refused("bound", "sub/dir", [link("l", "e/..")], bound);
    await refused("bound", "sub/dir", [link("m", "abs/x")], bound);
    await refused("bound", "sub/dir", [link("t", "top/sub/dir/x")], bound);
    await importInto("bound", "sub/dir", [link("k", "e/e/x")]);
    expect(readlinkSync(path.join(bound, "sub/dir/k"))).toBe("e/e/x");
  });
});
