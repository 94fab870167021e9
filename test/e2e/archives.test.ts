// ImportArchive and RestoreSnapshot treat archives as hostile (SPEC 4.2,
// shared/notes/security.md 2): every shape below is refused whole with
// FAILED_PRECONDITION / UNSAFE_ARCHIVE, the workspace is left exactly as it
// was, and nothing outside it is touched.
import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTar, type Member } from "../support/tar.js";
import { storedContents } from "../support/old-format.js";
import { expectError, setup, startDaemon, collect } from "./daemon.js";

let d: Awaited<ReturnType<typeof setup>>;
const outside = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-outside-")));

function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (p: string, rel: string) => {
    for (const name of readdirSync(p).sort()) {
      const full = path.join(p, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(full);
      if (st.isDirectory()) {
        out[r + "/"] = String(st.mode);
        walk(full, r);
      } else if (st.isSymbolicLink()) out[r] = "link";
      else out[r] = createHash("sha256").update(readFileSync(full)).digest("hex") + ":" + st.mode;
    }
  };
  walk(dir, "");
  return out;
}

async function importTar(bytes: Buffer, target = "") {
  async function* requests() {
    yield { event: { case: "header" as const, value: { workspace: d.ws, path: target } } };
    for (let i = 0; i < bytes.length; i += 64 * 1024) yield { event: { case: "chunk" as const, value: { data: bytes.subarray(i, i + 64 * 1024) } } };
  }
  return d.client.workspaces.importArchive(requests());
}

beforeAll(async () => {
  d = await setup("arch");
  writeFileSync(path.join(d.root, "victim.txt"), "keep me\n");
  mkdirSync(path.join(d.root, "sub"));
  writeFileSync(path.join(d.root, "sub", "inner.txt"), "inner\n");
  writeFileSync(path.join(outside, "secret.txt"), "secret\n");
});
afterAll(async () => {
  await d.stop();
  rmSync(outside, { recursive: true, force: true });
});

const hostile: Array<[string, () => Member[]]> = [
  ["an absolute member name", () => [{ name: "ok.txt", content: "x" }, { name: path.join(outside, "evil.txt"), content: "evil" }]],
  ["a member with ..", () => [{ name: "ok.txt", content: "x" }, { name: "../evil.txt", content: "evil" }]],
  ["a member climbing out midway (a/../../x)", () => [{ name: "a/../../evil.txt", content: "evil" }]],
  ["a pax path with .. (ustar name differs)", () => [{ name: "../" + "p".repeat(120) + "/evil.txt", content: "evil" }]],
  ["a symlink to an absolute directory, then a file through it", () => [
    { name: "etc", type: "symlink", linkname: outside },
    { name: "etc/secret.txt", content: "overwritten" },
  ]],
  ["a symlink pointing out (relative)", () => [{ name: "up", type: "symlink", linkname: "../../.." }]],
  ["a symlink chain escaping (b -> ., a -> b/..)", () => [
    { name: "b", type: "symlink", linkname: "." },
    { name: "a", type: "symlink", linkname: "b/.." },
  ]],
  ["a file through a symlink inside the archive", () => [
    { name: "real/", type: "directory" },
    { name: "l", type: "symlink", linkname: "real" },
    { name: "l/x.txt", content: "x" },
  ]],
  ["directory, then a symlink of the same name, then a file through it (CVE-2021-32803)", () => [
    { name: "d/", type: "directory" },
    { name: "d", type: "symlink", linkname: outside },
    { name: "d/secret.txt", content: "overwritten" },
  ]],
  ["a hard link to an absolute path", () => [{ name: "hl", type: "link", linkname: path.join(outside, "secret.txt") }]],
  ["a hard link climbing out", () => [{ name: "a/b/hl", type: "link", linkname: "../../../../secret.txt" }]],
  ["a hard link to a workspace file not in the archive", () => [{ name: "hl", type: "link", linkname: "victim.txt" }]],
  ["a character device", () => [{ name: "null", type: "character-device", devmajor: 1, devminor: 3 }]],
  ["a block device", () => [{ name: "sda", type: "block-device", devmajor: 8, devminor: 0 }]],
  ["a FIFO", () => [{ name: "ok.txt", content: "x" }, { name: "pipe", type: "fifo" }]],
  ["a file replacing a symlink of the archive", () => [
    { name: "s", type: "symlink", linkname: "victim.txt" },
    { name: "s", content: "through" },
  ]],
  ["a component longer than 255 bytes", () => [{ name: "n".repeat(300), content: "x" }]],
  ["a member deeper than 1,024 levels (the tree limit)", () => [{ name: Array(1024).fill("d").join("/") + "/f", content: "x" }]],
];

describe("ImportArchive refuses hostile archives and changes nothing", () => {
  for (const [label, members] of hostile) {
    it(label, async () => {
      const before = snapshotTree(d.root);
      const outsideBefore = snapshotTree(outside);
      await expectError(importTar(await makeTar(members())), "FAILED_PRECONDITION", "UNSAFE_ARCHIVE");
      expect(snapshotTree(d.root)).toEqual(before);
      expect(snapshotTree(outside)).toEqual(outsideBefore);
    });
  }

  it("garbage that is not a tarball", async () => {
    const before = snapshotTree(d.root);
    await expectError(importTar(Buffer.from("\x1f\x8bthis is not gzip at all")), "FAILED_PRECONDITION", "UNSAFE_ARCHIVE");
    expect(snapshotTree(d.root)).toEqual(before);
  });
});

describe("ImportArchive accepts honest archives", () => {
  it("plain tar into a new directory: files, dirs, inside links, hard links; set-uid/set-gid dropped", async () => {
    const bytes = await makeTar(
      [
        { name: "pkg/", type: "directory", mode: 0o755 },
        { name: "pkg/run.sh", content: "#!/bin/sh\n", mode: 0o6755 },
        { name: "pkg/data.txt", content: "data\n", mode: 0o666 },
        { name: "pkg/same.txt", type: "link", linkname: "pkg/data.txt" },
        { name: "pkg/link", type: "symlink", linkname: "data.txt" },
      ],
      false,
    );
    const result = await importTar(bytes, "imported");
    expect(result.fileCount).toBe(2n);
    const base = path.join(d.root, "imported", "pkg");
    expect(statSync(path.join(base, "run.sh")).mode & 0o7777).toBe(0o755);
    expect(statSync(path.join(base, "data.txt")).mode & 0o7777).toBe(0o644);
    expect(readFileSync(path.join(base, "same.txt"), "utf8")).toBe("data\n");
    expect(readFileSync(path.join(base, "link"), "utf8")).toBe("data\n");
    // no staging directory is left behind
    expect(readdirSync(d.root).filter((n) => n.startsWith(".filetools-tmp-"))).toEqual([]);
  });

  it("a staged directory replaces a symbolic link of the same name instead of writing through it", async () => {
    symlinkSync("sub", path.join(d.root, "lnk"));
    await importTar(await makeTar([{ name: "lnk/", type: "directory" }, { name: "lnk/f.txt", content: "f\n" }]));
    expect(lstatSync(path.join(d.root, "lnk")).isDirectory()).toBe(true);
    expect(readFileSync(path.join(d.root, "lnk", "f.txt"), "utf8")).toBe("f\n");
    expect(existsSync(path.join(d.root, "sub", "f.txt"))).toBe(false);
  });

  it("gzip into the root merges with what is there", async () => {
    await importTar(await makeTar([{ name: "sub/new.txt", content: "new\n" }]));
    expect(readFileSync(path.join(d.root, "sub", "new.txt"), "utf8")).toBe("new\n");
    expect(readFileSync(path.join(d.root, "sub", "inner.txt"), "utf8")).toBe("inner\n");
  });
});

describe("RestoreSnapshot refuses what it cannot trust and leaves the workspace untouched", () => {
  let r: Awaited<ReturnType<typeof startDaemon>>;
  let store: string;
  beforeAll(async () => {
    store = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-store-")));
    r = await startDaemon({ args: ["--store", `file://${store}`] });
  });
  afterAll(async () => {
    await r.stop();
    rmSync(store, { recursive: true, force: true });
  });

  it.each([
    ["a file's content (restore)", "content", "restore"],
    ["a header the table of contents makes anew (export)", "header", "export"],
  ] as const)("a tarball whose bytes do not match: %s", async (_name, where, call) => {
    const workspace = `t1-${where}`;
    const { run } = await r.client.workspaces.startRun({ workspace });
    await r.client.files.write({ workspace, path: "a.txt", body: { case: "content", value: "one\n" } });
    const { snapshot } = await r.client.workspaces.finishRun({ workspace, runId: run!.id });
    await r.client.files.write({ workspace, path: "a.txt", body: { case: "content", value: "two\n" } });
    const tarball = path.join(store, workspace, `${snapshot!.id}.tar.gz`);
    const bytes = readFileSync(tarball);
    const chunks = storedContents(store, workspace, snapshot!.id).chunks;
    // Inside a.txt's gzip member (its CRC), or inside the member of headers before it.
    const at = where === "content" ? chunks.offset[0]! + chunks.length[0]! - 6 : 12;
    bytes[at] = bytes[at]! ^ 0xff;
    writeFileSync(tarball, bytes);
    const before = snapshotTree(r.hostDir(workspace));
    const refused = call === "restore" ? r.client.workspaces.restoreSnapshot({ workspace, snapshotId: snapshot!.id }) : collect(r.client.workspaces.exportSnapshot({ workspace, snapshotId: snapshot!.id }));
    await expectError(refused, "DATA_LOSS", "DATA_LOSS");
    expect(snapshotTree(r.hostDir(workspace))).toEqual(before);
    expect(readFileSync(path.join(r.hostDir(workspace), "a.txt"), "utf8")).toBe("two\n");
  });

  it("a hostile tarball with a matching manifest (a tampered store)", async () => {
    await r.client.workspaces.createWorkspace({ workspace: "t2" });
    await r.client.files.write({ workspace: "t2", path: "keep.txt", body: { case: "content", value: "keep\n" } });
    const evil = await makeTar([{ name: "fine.txt", content: "x" }, { name: "../../escape.txt", content: "evil" }]);
    const id = "20200101T000000000Z-deadbeef";
    mkdirSync(path.join(store, "t2"), { recursive: true });
    writeFileSync(path.join(store, "t2", `${id}.tar.gz`), evil);
    const manifest = {
      id, workspace: "t2", runId: "", createdAt: "2020-01-01T00:00:00.000Z", sizeBytes: evil.length,
      sha256: createHash("sha256").update(evil).digest("hex"), fileCount: 2, labels: {},
      changes: { created: 0, modified: 0, deleted: 0, moved: 0 }, changeSet: [], tarball: `t2/${id}.tar.gz`,
    };
    writeFileSync(path.join(store, "t2", `${id}.json`), JSON.stringify(manifest));
    const before = snapshotTree(r.hostDir("t2"));
    await expectError(r.client.workspaces.restoreSnapshot({ workspace: "t2", snapshotId: id }), "FAILED_PRECONDITION", "UNSAFE_ARCHIVE");
    expect(snapshotTree(r.hostDir("t2"))).toEqual(before);
    expect(existsSync(path.join(r.dataDir, "escape.txt"))).toBe(false);
    expect(existsSync(path.join(r.dataDir, "workspaces", "escape.txt"))).toBe(false);
    const listed = await collect(r.client.files.list({ workspace: "t2", path: "" }));
    expect(listed.length).toBeGreaterThan(0);
  });
});
