// What a restore into a copy that already holds most of the snapshot must do
// (issue: "restores that move only what differs"): which of the snapshot's
// members to fetch, and which live entries to remove. A live file is kept
// when its stat is the one the last snapshot read (stat-cache.ts: its version
// covers inode, size, mtime and ctime) with the SHA-256 and mode the snapshot
// gives it, and a live directory when its mode is the snapshot's; everything
// else the snapshot holds is fetched, with the directories on the way to it
// (a copy one run behind stages a few files, not the tree's skeleton, which
// the merge would walk and the staging's discard remove again), and every
// live entry the snapshot does not hold as the same kind of entry is removed.
// The tree after the merge is the snapshot's, entry for entry: a walk of it
// is the kept entries as they were, and what the merge touched read again
// (afterMerge), so the restore need not walk the whole tree twice more. No
// I/O here.
import type { Components } from "../workspace/paths.js";
import type { ListedEntry } from "../workspace/fingerprint.js";
import type { TreeMember } from "./seekable-read.js";
import type { KnownFiles } from "./stat-cache.js";

export interface InPlacePlan {
  /** Members to stage and merge in (files replace what is there). */
  fetch: TreeMember[];
  /** Live entries to remove first (directories with what they hold), parents before children, none below another. */
  remove: Components[];
  /** Paths of the live entries the snapshot holds as they are. */
  kept: ReadonlySet<string>;
}

export function planInPlace(target: readonly TreeMember[], live: readonly ListedEntry[], known: KnownFiles): InPlacePlan {
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
    if (entry.type === "directory" && wanted === "directory") {
      if ((entry.mode & 0o777) === member!.header.mode) kept.add(entry.path);
      continue;
    }
    if (entry.type === "file" && wanted === "file") {
      const seen = known.get(entry.path);
      if (seen?.version === entry.version && seen.sha256 === member!.sha256 && (entry.mode & 0o777) === member!.header.mode) kept.add(entry.path);
      continue; // else the fetched one replaces it
    }
    remove.push(entry.parts);
    if (entry.type === "directory") removedDirectory = entry.path;
  }
  // What differs, and the directories on the way to it (the staged tree holds the way; the live ones stay as they are).
  const fetched = new Set<string>();
  for (const member of target) {
    if (kept.has(member.path)) continue;
    fetched.add(member.path);
    for (let slash = member.path.lastIndexOf("/"); slash > 0 && !fetched.has(member.path.slice(0, slash)); slash = member.path.lastIndexOf("/", slash - 1)) fetched.add(member.path.slice(0, slash));
  }
  return { fetch: target.filter((member) => fetched.has(member.path)), remove, kept };
}

/**
 * What a walk would list after the merge of `plan`, from the walk it was
 * planned from: the kept entries the merge leaves alone, as `live` listed
 * them, and the entries whose stat it changes, to be read again — what it
 * placed, the directories it went through (given as `fetchedParts`, the
 * components of each fetched member), and those it removed entries from.
 */
export function afterMerge(live: readonly ListedEntry[], plan: InPlacePlan, fetchedParts: readonly Components[]): { untouched: ListedEntry[]; touched: Components[] } {
  const touched = new Map<string, Components>();
  for (const parts of [...fetchedParts, ...plan.remove.map((parts) => parts.slice(0, -1))]) {
    if (parts.length > 0) touched.set(parts.join("/"), parts); // the root is not listed
  }
  const untouched = live.filter((entry) => plan.kept.has(entry.path) && !touched.has(entry.parts.join("/")));
  return { untouched, touched: [...touched.values()] };
}
