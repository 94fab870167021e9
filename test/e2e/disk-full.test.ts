// A real full disk: the daemon's workspaces root is a 2 MiB tmpfs (mounted
// here; the tests run as root). Every write that meets ENOSPC is
// RESOURCE_EXHAUSTED / NO_SPACE, leaves no temp file or staging directory,
// and leaves the files as they were; reads, listings and searches go on, and
// a write succeeds again once a delete frees space.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTar } from "../support/tar.js";
import { collect, expectError, listAll, readAll, startDaemon, type Daemon } from "./daemon.js";

const dataDir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-e2e-full-")));
const mountPoint = path.join(dataDir, "workspaces");
mkdirSync(mountPoint);
let refused = "";
try {
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mountPoint], { stdio: "pipe" });
} catch (error) {
  refused = String((error as { stderr?: Buffer }).stderr ?? error).trim();
}
if (refused) console.warn(`disk-full tests skipped: mount -t tmpfs was refused (${refused}); they need root`);

const MiB = 1024 * 1024;
const ws = "full";
let d: Daemon;

const write = (p: string, data: Buffer | string, extra: Record<string, unknown> = {}) =>
  d.client.files.write({ workspace: ws, path: p, body: typeof data === "string" ? { case: "content", value: data } : { case: "data", value: data }, ...extra });

function* uploadMessages(p: string, data: Buffer) {
  yield { event: { case: "header" as const, value: { workspace: ws, path: p } } };
  for (let i = 0; i < data.length; i += 256 * 1024) yield { event: { case: "chunk" as const, value: { data: data.subarray(i, i + 256 * 1024) } } };
}

async function importTar(tar: Buffer) {
  async function* requests() {
    yield { event: { case: "header" as const, value: { workspace: ws, path: "imported" } } };
    yield { event: { case: "chunk" as const, value: { data: tar } } };
  }
  return d.client.workspaces.importArchive(requests());
}

/** Names on the tmpfs that are not the workspace's own files: temp files, staging and swap directories. */
function leftovers(): string[] {
  const found: string[] = [];
  const walk = (p: string) => {
    for (const entry of readdirSync(p, { withFileTypes: true })) {
      if (/^\.(filetools-tmp|staging|swap|old)-/.test(entry.name)) found.push(path.join(p, entry.name).slice(mountPoint.length));
      else if (entry.isDirectory()) walk(path.join(p, entry.name));
    }
  };
  walk(mountPoint);
  return found;
}

const hostFile = (p: string) => readFileSync(path.join(mountPoint, ws, p), "utf8");

describe.skipIf(refused !== "")("a full disk (a 2 MiB tmpfs as the workspaces root)", () => {
  beforeAll(async () => {
    d = await startDaemon({ dataDir });
    await d.client.workspaces.createWorkspace({ workspace: ws });
    await write("keep.txt", "the original content\nsecond line\n");
    await write("log.txt", "line one\n");
    // Fill the disk to within a few pages.
    const filler = Buffer.alloc(256 * 1024, "f");
    for (let i = 0; ; i++) {
      const ok = await write(`filler/${i}.bin`, filler).then(() => true, () => false);
      if (!ok) break;
    }
  });
  afterAll(async () => {
    await d?.stop(true);
    execFileSync("umount", [mountPoint]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("Write of a new file and over an existing one: NO_SPACE, no temp file, the old content intact", async () => {
    const big = Buffer.alloc(512 * 1024, "b");
    const error = await expectError(write("new.bin", big), "RESOURCE_EXHAUSTED", "NO_SPACE");
    expect(error.message).toContain("/new.bin");
    await expectError(write("keep.txt", big), "RESOURCE_EXHAUSTED", "NO_SPACE");
    expect(hostFile("keep.txt")).toBe("the original content\nsecond line\n");
    expect(readdirSync(path.join(mountPoint, ws))).not.toContain("new.bin");
    expect(leftovers()).toEqual([]);
  });

  it("APPEND: NO_SPACE and the file cut back to what it held", async () => {
    await expectError(write("log.txt", "x".repeat(MiB), { mode: 4 }), "RESOURCE_EXHAUSTED", "NO_SPACE");
    expect(hostFile("log.txt")).toBe("line one\n");
  });

  it("Upload: NO_SPACE, its staged bytes removed", async () => {
    await expectError(d.client.files.upload(uploadMessages("up.bin", Buffer.alloc(MiB, "u"))), "RESOURCE_EXHAUSTED", "NO_SPACE");
    expect(readdirSync(path.join(mountPoint, ws))).not.toContain("up.bin");
    expect(leftovers()).toEqual([]);
  });

  it("ImportArchive: NO_SPACE, the staging directory removed, nothing merged", async () => {
    const tar = await makeTar([{ name: "small.txt", content: "s" }, { name: "big.bin", content: Buffer.alloc(MiB, "i") }]);
    await expectError(importTar(tar), "RESOURCE_EXHAUSTED", "NO_SPACE");
    expect(readdirSync(path.join(mountPoint, ws))).not.toContain("imported");
    expect(leftovers()).toEqual([]);
  });

  it("Edit that grows the file: NO_SPACE, the file as it was", async () => {
    await expectError(
      d.client.files.edit({ workspace: ws, path: "keep.txt", edits: [{ oldText: "second line", newText: "y".repeat(MiB) }] }),
      "RESOURCE_EXHAUSTED",
      "NO_SPACE",
    );
    expect(hostFile("keep.txt")).toBe("the original content\nsecond line\n");
    expect(leftovers()).toEqual([]);
  });

  it("reads, listings and searches still work, and a write succeeds once a delete frees space", async () => {
    expect((await readAll(d.client, { workspace: ws, path: "keep.txt" })).text).toBe("the original content\nsecond line\n");
    expect((await listAll(d.client, { workspace: ws, path: "" })).paths).toEqual(expect.arrayContaining(["/keep.txt", "/log.txt", "/filler"]));
    const found = await collect(d.client.files.search({ workspace: ws, pattern: "original" }));
    expect(JSON.stringify(found, (_, v) => (typeof v === "bigint" ? String(v) : v))).toContain("/keep.txt");
    await d.client.files.delete({ workspace: ws, path: "filler", recursive: true });
    await write("new.bin", Buffer.alloc(512 * 1024, "b"));
    await write("keep.txt", "replaced\n");
    expect(hostFile("keep.txt")).toBe("replaced\n");
    expect(leftovers()).toEqual([]);
  });
});
