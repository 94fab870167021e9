// A cheap fingerprint of a workspace's tree: every entry's path, type,
// permission bits and version (identity, size, mtime and ctime: entry.ts),
// hashed in walk order. Equal fingerprints mean nothing was written, renamed,
// created or removed in between, by the daemon or behind its back — except
// a write that lands in the same clock tick as the fingerprint and keeps the
// file's size and inode (git's "racily clean" case), which the daemon's own
// writes never are: they replace the inode.
import { createHash } from "node:crypto";
import type { Entry } from "./entry.js";
import type { Workspace } from "./workspace.js";
import type { WalkEntry } from "./walk.js";
import type { Staging } from "./staging.js";

/** A fingerprint taken entry by entry, by any walk of the whole tree (a snapshot's pack takes one as it goes). */
export class TreeFingerprint {
  private readonly hash = createHash("sha256");
  private entries = 0;

  add(entry: Pick<Entry, "path" | "type" | "mode" | "version">): void {
    this.entries++;
    this.hash.update(`${entry.path}\0${entry.type}\0${entry.mode}\0${entry.version}\n`);
  }

  /** The fingerprint, and how many entries it has (0: an empty workspace). */
  result(): { fingerprint: string; entries: number } {
    return { fingerprint: this.hash.digest("hex"), entries: this.entries };
  }
}

/** An entry as a walk of the whole tree saw it (stat only): what a fingerprint and a restore's plan need. */
export type ListedEntry = Pick<WalkEntry, "parts" | "path" | "type" | "version" | "mode" | "ctimeNs" | "mtimeNs">;

/** The whole tree, as a fingerprint sees it. */
const WHOLE_TREE = { recursive: true, maxDepth: 0, includeHidden: true, respectGitignore: false };

/** A tree's entries in walk order, and its fingerprint (one walk for both). */
export type TreeListing = { fingerprint: string; listing: ListedEntry[] };

/** The tree's entries in walk order, and its fingerprint (one walk for both). */
export function listTree(workspace: Workspace, signal?: AbortSignal): Promise<TreeListing> {
  return listed(workspace.walk([], WHOLE_TREE), signal);
}

/**
 * The same of the tree a staging directory holds: what listTree gives once
 * a managed workspace's directory is swapped for it (the swap renames only
 * the directory itself; see replaceWithStaging), unless something changes it after.
 */
export function listStaged(workspace: Workspace, staging: Staging, signal?: AbortSignal): Promise<TreeListing> {
  return listed(workspace.walkStaging(staging, WHOLE_TREE), signal);
}

async function listed(entries: AsyncIterable<WalkEntry>, signal?: AbortSignal): Promise<TreeListing> {
  const fingerprint = new TreeFingerprint();
  const listing: ListedEntry[] = [];
  for await (const entry of entries) {
    signal?.throwIfAborted();
    fingerprint.add(entry);
    listing.push({ parts: entry.parts, path: entry.path, type: entry.type, version: entry.version, mode: entry.mode, ctimeNs: entry.ctimeNs, mtimeNs: entry.mtimeNs });
  }
  return { fingerprint: fingerprint.result().fingerprint, listing };
}
