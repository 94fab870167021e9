// What a restore into a copy that already holds most of the snapshot must do
// (issue: "restores that move only what differs"): which of the snapshot's
// members to fetch, and which live entries to remove. A live file is kept
// when its stat is the one the last snapshot read (stat-cache.ts: its version
// covers inode, size, mtime and ctime) with the SHA-256 and mode the snapshot
// gives it; everything else the snapshot holds is fetched (directories too:
// they cost nothing and the merge keeps existing ones), and every live entry
// the snapshot does not hold as the same kind of entry is removed. The tree
// after the merge is the snapshot's, entry for entry. No I/O here.
import type { EntryType } from "../workspace/entry.js";
import type { Components } from "../workspace/paths.js";
import type { TreeMember } from "./seekable-read.js";
import type { KnownFiles } from "./stat-cache.js";

/** A live entry, as the walk found it. */
export interface LiveEntry {
  parts: Components;
  /** Workspace path (escaped). */
  path: string;
  type: EntryType;
  version: string;
  mode: number;
  ctimeNs: bigint;
  mtimeNs: bigint;
}

export interface InPlacePlan {
  /** Members to stage and merge in (files replace what is there). */
  fetch: TreeMember[];
  /** Live entries to remove first (directories with what they hold), parents before children, none below another. */
  remove: Components[];
  /** Workspace paths of the live files kept as they are. */
  kept: Set<string>;
}

export function planInPlace(target: readonly TreeMember[], live: readonly LiveEntry[], known: KnownFiles): InPlacePlan {
  const byPath = new Map(target.map((member) => [member.path, member]));
  const kept = new Set<string>();
  const remove: Components[] = [];
  let removedDirectory: string | undefined;
  for (const entry of live) {
    if (entry.parts.length === 0) continue;
    // Below a directory removed whole: gone with it.
    if (removedDirectory !== undefined && entry.path.startsWith(removedDirectory + "/")) continue;
    const member = byPath.get(entry.path);
    const wanted = member?.header.type;
    if (entry.type === "directory" && wanted === "directory") continue;
    if (entry.type === "file" && wanted === "file") {
      const seen = known.get(entry.path);
      if (seen?.version === entry.version && seen.sha256 === member!.sha256 && (entry.mode & 0o777) === member!.header.mode) kept.add(entry.path);
      continue; // else the fetched one replaces it
    }
    remove.push(entry.parts);
    if (entry.type === "directory") removedDirectory = entry.path;
  }
  return { fetch: target.filter((member) => !kept.has(member.path)), remove, kept };
}
