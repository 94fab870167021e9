// The live workspace's regular files and symbolic links with their SHA-256s,
// for a diff against a snapshot's file list: the same set the snapshot packer
// stores (single-link regular files opened by the walk relative to its held
// directory, links by target, never followed; directories, FIFOs, sockets and
// devices left out), with the same modes (st_mode & 0o777, links 0o777).
// One file open at a time, read and checked as the packer reads it
// (opened-file.ts): memory stays bounded however large the tree.
import { createHash } from "node:crypto";
import type { Components } from "./paths.js";
import type { Workspace } from "./workspace.js";

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
  const walk = workspace.walk([], { recursive: true, maxDepth: 0, includeHidden: true, respectGitignore: false, open: () => true });
  for await (const entry of walk) {
    if (signal?.aborted) {
      entry.opened?.close();
      signal.throwIfAborted();
    }
    if (entry.type === "symlink") {
      const target = await workspace.readLink(entry.parts).catch(() => null);
      if (target !== null) yield { path: entry.path, type: "symlink", size: 0, mode: 0o777, sha256: "", target };
      continue;
    }
    if (entry.type !== "file" || !entry.opened) continue;
    const file = entry.opened;
    try {
      const hash = createHash("sha256");
      let size = 0;
      const lone = await file.readAll((chunk) => {
        hash.update(chunk);
        size += chunk.length;
      });
      if (lone) yield { path: entry.path, type: "file", size, mode: file.mode & 0o777, sha256: hash.digest("hex"), target: "" };
    } finally {
      file.close();
    }
  }
}

/** A regular file's SHA-256 (hex), and its version when it was opened (a link inside is followed, as openFile follows it). */
export async function hashFile(workspace: Workspace, parts: Components, signal?: AbortSignal): Promise<{ version: string; sha256: string }> {
  const file = await workspace.openFile(parts);
  try {
    const hash = createHash("sha256");
    for await (const chunk of file.chunks()) {
      signal?.throwIfAborted(); // a large file is given up between pieces
      hash.update(chunk);
    }
    return { version: file.entry.version, sha256: hash.digest("hex") };
  } finally {
    await file.close();
  }
}
