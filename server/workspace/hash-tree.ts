// The live workspace's regular files and symbolic links with their SHA-256s,
// for a diff against a snapshot's file list: the same set the snapshot packer
// stores (single-link regular files opened by the walk relative to its held
// directory, links by target, never followed; directories, FIFOs, sockets and
// devices left out), with the same modes (st_mode & 0o777, links 0o777).
// One file open at a time and one reused buffer: memory stays bounded
// however large the tree.
import { createHash } from "node:crypto";
import { fstatSync, read } from "node:fs";
import { isLoneFile } from "./lone-file.js";
import type { Workspace } from "./workspace.js";

const CHUNK_BYTES = 1 << 20;

export interface HashedEntry {
  /** Workspace path, escaped (entry.ts). */
  path: string;
  type: "file" | "symlink";
  /** Bytes (0 for a link). */
  size: number;
  /** Permission bits (0o777 for a link, as the packer stores it). */
  mode: number;
  /** SHA-256 (hex); "" for a link. */
  sha256: string;
  /** A link's target; "" for a file. */
  target: string;
}

/** Every file and link of the workspace in walk order; one that vanishes or turns out hard-linked meanwhile is left out, as the packer leaves it out. */
export async function* hashTree(workspace: Workspace, signal?: AbortSignal): AsyncGenerator<HashedEntry> {
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  const walk = workspace.walk([], { recursive: true, maxDepth: 0, includeHidden: true, respectGitignore: false, open: () => true });
  for await (const entry of walk) {
    if (signal?.aborted) {
      await entry.opened?.close();
      signal.throwIfAborted();
    }
    if (entry.type === "symlink") {
      const target = await workspace.readLink(entry.parts).catch(() => null);
      if (target !== null) yield { path: entry.path, type: "symlink", size: 0, mode: 0o777, sha256: "", target };
      continue;
    }
    if (entry.type !== "file" || !entry.opened) continue;
    const { fd } = entry.opened;
    try {
      const stats = fstatSync(fd);
      if (!stats.isFile() || stats.nlink !== 1) continue;
      const hash = createHash("sha256");
      let size = 0;
      for (;;) {
        const n = await readAt(fd, buffer, size);
        if (n === 0) break;
        hash.update(buffer.subarray(0, n));
        size += n;
      }
      // Checked after the read, as every reader of content does (lone-file.ts).
      if (!isLoneFile(fd)) continue;
      yield { path: entry.path, type: "file", size, mode: stats.mode & 0o777, sha256: hash.digest("hex"), target: "" };
    } finally {
      await entry.opened.close();
    }
  }
}

function readAt(fd: number, buffer: Buffer, position: number): Promise<number> {
  return new Promise((resolve, reject) => read(fd, buffer, 0, buffer.length, position, (error, n) => (error ? reject(error) : resolve(n))));
}
