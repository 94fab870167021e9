// The packer's file list and the live workspace's hashes (workspace/hash-tree.ts)
// describe the same tree the same way: a diff of a snapshot against the
// workspace it was just taken of is empty. Both leave out what a snapshot
// leaves out (hard-linked files, FIFOs, directories).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Workspace } from "../workspace/workspace.js";
import { hashTree } from "../workspace/hash-tree.js";
import { recordsOf } from "./file-list.js";
import { packSeekable } from "./seekable.js";

let base = "";
let workspace: Workspace;
beforeAll(async () => {
  base = mkdtempSync(path.join(tmpdir(), "pack-list-"));
  const root = path.join(base, "root");
  mkdirSync(path.join(root, "src", "deep"), { recursive: true });
  writeFileSync(path.join(root, "src", "a.ts"), "export const a = 1;\n");
  writeFileSync(path.join(root, "src", "deep", "big.bin"), Buffer.alloc(3 * 1024 * 1024 + 17, 7)); // past the one-read size: chunked
  writeFileSync(path.join(root, "run.sh"), "#!/bin/sh\n");
  chmodSync(path.join(root, "run.sh"), 0o750);
  writeFileSync(path.join(root, "empty"), "");
  for (const file of ["src/a.ts", "src/deep/big.bin", "empty"]) chmodSync(path.join(root, file), 0o644); // whatever the umask
  symlinkSync("src/a.ts", path.join(root, "alias"));
  writeFileSync(path.join(base, "outside"), "secret\n");
  linkSync(path.join(base, "outside"), path.join(root, "hardlinked"));
  execFileSync("mkfifo", [path.join(root, "fifo")]);
  workspace = await Workspace.open("t", root, false);
});
afterAll(() => {
  workspace?.close();
  rmSync(base, { recursive: true, force: true });
});

describe("the snapshot's file list", () => {
  it("is what the packer streamed: sizes, modes, SHA-256s and link targets, the same records as the live workspace hashed", async () => {
    const packed = packSeekable(workspace, { key: "w/t.tar.gz", level: 6, scratchDir: tmpdir() });
    for await (const _ of packed.bytes);
    const listed = [...recordsOf(packed.fileList())];
    const sha = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");
    const byPath = <T extends { path: string }>(records: T[]) => [...records].sort((a, b) => a.path.localeCompare(b.path));
    expect(byPath(listed)).toEqual(
      byPath([
        { path: "/empty", type: "file", size: 0, mode: 0o644, sha256: sha(""), target: "" },
        { path: "/run.sh", type: "file", size: 10, mode: 0o750, sha256: sha("#!/bin/sh\n"), target: "" },
        { path: "/src/a.ts", type: "file", size: 20, mode: 0o644, sha256: sha("export const a = 1;\n"), target: "" },
        { path: "/src/deep/big.bin", type: "file", size: 3 * 1024 * 1024 + 17, mode: 0o644, sha256: sha(Buffer.alloc(3 * 1024 * 1024 + 17, 7)), target: "" },
        { path: "/alias", type: "symlink", size: 0, mode: 0o777, sha256: "", target: "src/a.ts" },
      ]),
    );
    expect(packed.fileCount).toBe(4);
    const live = [];
    for await (const record of hashTree(workspace)) live.push(record);
    expect(byPath(live)).toEqual(byPath(listed));
  });
});
