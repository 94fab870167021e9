// What a restore into a copy that already holds most of the snapshot must do
// (issue: "restores that move only what differs"): which of the snapshot's
// members to fetch, and which live entries to remove. A live file is kept
// when its stat is the one the last snapshot read (stat-cache.ts: its version
// covers inode, size, mtime and ctime), or the one it had when read and hashed
// just before the plan (toHash), with the SHA-256 and mode the snapshot
// gives it, and a live directory when its mode is the snapshot's; everything
// else the snapshot holds is fetched, and every live entry the snapshot does
// not hold as the same kind of entry is removed. A fetched file whose
// directory is kept is staged loose and moved into it; the rest is staged
// with the directories on the way to it and merged in. So a copy one run
// behind stages a few files, not even the directories they go into (each
// would be created, walked by the merge and removed again by the staging's
// discard: ~1 ms an rmdir on a loaded disk). The tree after the merge is the
// snapshot's, entry for entry: a walk of it is the kept entries as they
// were, and what the merge touched read again (afterMerge), so the restore
// need not walk the whole tree twice more. Every entry the merge touches,
// and every kept one whose mtime is not the snapshot's to the second (the
// precision a table of contents holds), then takes the snapshot's mtime: a
// merge moves the mtime of the directories it adds to or removes from. No
// I/O here: the caller hashes.
import type { Components } from "../workspace/paths.js";
import type { ListedEntry } from "../workspace/fingerprint.js";
import { wholeSeconds } from "../workspace/entry.js";
import type { TreeMember } from "./seekable-read.js";
import type { KnownFiles } from "./stat-cache.js";

export interface InPlacePlan {
  /** Members to stage at their paths, with the directories on the way to them, and merge in (files replace what is there). */
  fetch: TreeMember[];
  /** Files whose directory is kept: staged apart, each moved into place (replacing what is there). */
  loose: TreeMember[];
  /** Live entries to remove first (directories with what they hold), parents before children, none below another. */
  remove: Components[];
  /** Paths of the live entries the snapshot holds as they are. */
  kept: ReadonlySet<string>;
  /** Kept entries whose mtime is not the snapshot's (to the second). */
  retime: Components[];
}

export function planInPlace(target: readonly TreeMember[], live: readonly ListedEntry[], known: KnownFiles): InPlacePlan {
  const byPath = new Map(target.map((member) => [member.path, member]));
  const kept = new Set<string>();
  const remove: Components[] = [];
  const retime: Components[] = [];
  const keep = (entry: ListedEntry, member: TreeMember): void => {
    kept.add(entry.path);
    if (wholeSeconds(entry.mtimeNs) !== BigInt(member.header.mtime)) retime.push(entry.parts);
  };
  let removedDirectory: string | undefined;
  for (const entry of live) {
    if (entry.parts.length === 0) continue;
    // Below a directory removed whole: gone with it.
    if (removedDirectory !== undefined && entry.path.startsWith(removedDirectory + "/")) continue;
    const member = byPath.get(entry.path);
    const wanted = member?.header.type;
    if (entry.type === "directory" && wanted === "directory") {
      if ((entry.mode & 0o777) === member!.header.mode) keep(entry, member!);
      continue;
    }
    if (entry.type === "file" && wanted === "file") {
      const seen = known.get(entry.path);
      if (seen?.version === entry.version && seen.sha256 === member!.sha256 && (entry.mode & 0o777) === member!.header.mode) keep(entry, member!);
      continue; // else the fetched one replaces it
    }
    remove.push(entry.parts);
    if (entry.type === "directory") removedDirectory = entry.path;
  }
  // What differs: loose into a kept directory, else with the directories on the way to it (the staged tree holds the way; the live ones stay as they are).
  const loose: TreeMember[] = [];
  const fetched = new Set<string>();
  for (const member of target) {
    if (kept.has(member.path)) continue;
    const directory = member.path.slice(0, member.path.lastIndexOf("/"));
    if (member.header.type === "file" && (directory === "" || kept.has(directory))) {
      loose.push(member);
      continue;
    }
    fetched.add(member.path);
    for (let slash = member.path.lastIndexOf("/"); slash > 0 && !fetched.has(member.path.slice(0, slash)); slash = member.path.lastIndexOf("/", slash - 1)) fetched.add(member.path.slice(0, slash));
  }
  return { fetch: target.filter((member) => fetched.has(member.path)), loose, remove, kept, retime };
}

/**
 * Live files the stat cache does not vouch for that may hold their member's
 * content already: same size and mode. Read and hashed before the plan (the
 * issue's "skip every file the local copy already has with the same
 * SHA-256"), one that matches is kept, not fetched. Chiefly the files the
 * last in-place restore placed: their ctime is the restore's own, too late
 * for its stat cache to vouch for them (stat-cache.ts: settled), so the next
 * restore of a copy one run behind would fetch them again, and each round
 * more.
 */
export function toHash(target: readonly TreeMember[], live: readonly ListedEntry[], known: KnownFiles): ListedEntry[] {
  const files = new Map(target.filter((member) => member.header.type === "file").map((member) => [member.path, member]));
  return live.filter((entry) => {
    const member = entry.type === "file" ? files.get(entry.path) : undefined;
    return member !== undefined && known.get(entry.path)?.version !== entry.version && entry.size === BigInt(member.header.size) && (entry.mode & 0o777) === member.header.mode;
  });
}

/**
 * What a walk would list after the merge of `plan`, from the walk it was
 * planned from: the kept entries the merge leaves alone, as `live` listed
 * them, and the entries whose stat it changes, to be given the snapshot's
 * mtime and read again — what it placed (`placed`: the components of every
 * member staged, loose or not), the directories it placed them in or
 * removed entries from, and the kept entries to retime.
 */
export function afterMerge(live: readonly ListedEntry[], plan: InPlacePlan, placed: readonly Components[]): { untouched: ListedEntry[]; touched: Components[] } {
  const touched = new Map<string, Components>();
  for (const parts of [...placed, ...placed.map((parts) => parts.slice(0, -1)), ...plan.remove.map((parts) => parts.slice(0, -1)), ...plan.retime]) {
    if (parts.length > 0) touched.set(parts.join("/"), parts); // the root is not listed
  }
  const untouched = live.filter((entry) => plan.kept.has(entry.path) && !touched.has(entry.parts.join("/")));
  return { untouched, touched: [...touched.values()] };
}

/** The snapshot's mtime (seconds) for each of `entries` it holds. */
export function snapshotTimes(members: readonly TreeMember[], entries: readonly Components[]): Array<{ parts: Components; mtime: number }> {
  const mtimes = new Map(members.map((member) => [member.header.name, member.header.mtime]));
  return entries.flatMap((parts) => {
    const mtime = mtimes.get(parts.join("/"));
    return mtime === undefined ? [] : [{ parts, mtime }];
  });
}
