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
  /** Entries not hashed yet: hashed a few hundred at a time, not with a native call each (the same bytes either way). */
  private pending = "";

  add(entry: Pick<Entry, "path" | "type" | "mode" | "version">): void {
    this.entries++;
    this.pending += `${entry.path}\0${entry.type}\0${entry.mode}\0${entry.version}\n`;
    if (this.pending.length >= PENDING_CHARS) this.flush();
  }

  /** The fingerprint, and how many entries it has (0: an empty workspace). */
  result(): { fingerprint: string; entries: number } {
    this.flush();
    return { fingerprint: this.hash.digest("hex"), entries: this.entries };
  }

  private flush(): void {
    this.hash.update(this.pending);
    this.pending = "";
  }
}

const PENDING_CHARS = 32 * 1024;

/** An entry as a walk of the whole tree saw it (stat only): what a fingerprint and a restore's plan need. */
export type ListedEntry = Pick<WalkEntry, "parts" | "path" | "type" | "version" | "size" | "mode" | "ctimeNs" | "mtimeNs">;

/** The whole tree, as a fingerprint sees it. */
const WHOLE_TREE = { recursive: true, maxDepth: 0, includeHidden: true, respectGitignore: false };

/** A walk of the whole tree: its entries in walk order and its fingerprint. */
export interface ListedTree {
  fingerprint: string;
  listing: ListedEntry[];
  /**
   * Whether `workspace` still holds the tree listed: it is the object walked,
   * managed (changed only through the daemon), with no change under way when
   * the walk began and none begun since. False whenever that cannot be known.
   */
  current(workspace: Workspace): boolean;
}

/** The tree's entries in walk order, and its fingerprint (one walk for both). */
export async function listTree(workspace: Workspace, signal?: AbortSignal): Promise<ListedTree> {
  // Taken before the walk: a change that begins while it runs is counted after the mark.
  const mark = workspace.bound ? undefined : workspace.changeMark();
  const { fingerprint, listing } = await listed(workspace.walk([], WHOLE_TREE), signal);
  return { fingerprint, listing, current: (now) => now === workspace && mark !== undefined && !workspace.changedSince(mark) };
}

/**
 * The same of the tree a staging directory holds: what listTree gives once
 * a managed workspace's directory is swapped for it (the swap renames only
 * the directory itself; see replaceWithStaging), unless something changes it
 * after. Never current: once swapped in, another Workspace holds it.
 */
export async function listStaged(workspace: Workspace, staging: Staging, signal?: AbortSignal): Promise<ListedTree> {
  return { ...(await listed(workspace.walkStaging(staging, WHOLE_TREE), signal)), current: () => false };
}

async function listed(entries: AsyncIterable<WalkEntry>, signal?: AbortSignal): Promise<Pick<ListedTree, "fingerprint" | "listing">> {
  const fingerprint = new TreeFingerprint();
  const listing: ListedEntry[] = [];
  for await (const entry of entries) {
    signal?.throwIfAborted();
    fingerprint.add(entry);
    listing.push({ parts: entry.parts, path: entry.path, type: entry.type, version: entry.version, size: entry.size, mode: entry.mode, ctimeNs: entry.ctimeNs, mtimeNs: entry.mtimeNs });
  }
  return { fingerprint: fingerprint.result().fingerprint, listing };
}
