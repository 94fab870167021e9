// A stored snapshot may inflate only to what its manifest's file list
// accounts for (tarBytesFor, plus an allowance for empty directories): the
// packer must never write more than that for the tree the list describes,
// whatever its names (long, pax, GNU long names of bytes that are not UTF-8),
// link targets and sizes.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Workspace } from "../workspace/workspace.js";
import { tarBytesFor } from "./file-list.js";
import { packSeekable } from "./seekable.js";

let base = "";
let workspace: Workspace;
beforeAll(async () => {
  base = mkdtempSync(path.join(tmpdir(), "tar-bytes-"));
  const root = path.join(base, "root");
  // Near the path limit (4,095 bytes): 15 components of 255 bytes, a file at the bottom.
  const deep = path.join(root, ...Array.from({ length: 15 }, (_, i) => String(i % 10).repeat(255)));
  mkdirSync(deep, { recursive: true });
  writeFileSync(path.join(deep, "f"), "deep\n");
  // Non-ASCII UTF-8 (pax path) and bytes that are not UTF-8 (GNU long names), for a file and a link.
  mkdirSync(path.join(root, "ünï"));
  writeFileSync(path.join(root, "ünï", "çödé.txt"), "x".repeat(511));
  writeFileSync(Buffer.from(`${root}/raw-\xff\xfe`, "latin1"), Buffer.alloc(513));
  symlinkSync(Buffer.from("raw-\xff\xfe", "latin1"), Buffer.from(`${root}/ln-\xfd`, "latin1"));
  // A link target of 4,095 bytes, and many small files in many directories.
  symlinkSync("a/".repeat(2047) + "b", path.join(root, "long-target"));
  for (let d = 0; d < 50; d++) {
    mkdirSync(path.join(root, "many", `d${d}`), { recursive: true });
    for (let f = 0; f < 20; f++) writeFileSync(path.join(root, "many", `d${d}`, `f${f}`), f % 2 ? "" : "1");
  }
  workspace = await Workspace.open("t", root, false);
});
afterAll(() => {
  workspace?.close();
  rmSync(base, { recursive: true, force: true });
});

describe("tarBytesFor", () => {
  it("bounds the plain tar the packer writes for the tree its file list describes", async () => {
    const packed = packSeekable(workspace, { key: "w/t.tar.gz", level: 6, scratchDir: tmpdir() });
    const chunks: Buffer[] = [];
    for await (const chunk of packed.bytes) chunks.push(Buffer.from(chunk));
    const plain = gunzipSync(Buffer.concat(chunks)).length;
    const bound = tarBytesFor(packed.fileList());
    console.log(`plain tar ${plain} bytes, file list accounts for ${bound}`);
    expect(plain).toBeLessThanOrEqual(bound);
    // Not a blind allowance: a few KiB a member (1,009 files and links, 68 directories).
    expect(bound).toBeLessThan(plain + 1100 * 4096);
  });
});
