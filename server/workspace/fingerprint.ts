// A cheap fingerprint of a workspace's tree: every entry's path, type,
// permission bits and version (identity, size, mtime and ctime: entry.ts),
// hashed in walk order. Equal fingerprints mean nothing was written, renamed,
// created or removed in between, by the daemon or behind its back — except
// a write that lands in the same clock tick as the fingerprint and keeps the
// file's size and inode (git's "racily clean" case), which the daemon's own
// writes never are: they replace the inode.
import { createHash } from "node:crypto";
import type { Workspace } from "./workspace.js";

/** The tree's fingerprint, and how many entries it has (0: an empty workspace). */
export async function fingerprintTree(workspace: Workspace, signal?: AbortSignal): Promise<{ fingerprint: string; entries: number }> {
  const hash = createHash("sha256");
  let entries = 0;
  for await (const entry of workspace.walk([], { recursive: true, maxDepth: 0, includeHidden: true, respectGitignore: false })) {
    signal?.throwIfAborted();
    entries++;
    hash.update(`${entry.path}\0${entry.type}\0${entry.mode}\0${entry.version}\n`);
  }
  return { fingerprint: hash.digest("hex"), entries };
}
