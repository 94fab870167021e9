// Opening a file by name inside a directory a walk holds open, for the
// readers of walked files: the search workers (synchronous: it runs on a
// worker thread), the snapshot packer and the live side of a diff. The
// directory was reached through the workspace's containment rules; the name
// is one entry of it (no "/"), opened with O_NOFOLLOW, so what is opened is
// inside. The one-link rule (lone-file.ts) is checked on the descriptor at
// open, and by the reader again after the read; or, for the search workers
// (openHeldName, checkHeldRead), once, after the first read.
import { closeSync, constants, fstatSync, lstatSync, openSync, type BigIntStats } from "node:fs";
import { fsPath } from "./names.js";

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;
/** Opens of a name replaced between its lstat and its open (openAsFound), before the file is skipped as "kept-changing". */
const OPEN_ATTEMPTS = 3;

export type SkipReason = "not-a-regular-file" | "hard-linked" | "gone" | "kept-changing";
export type HeldOpen = { fd: number; stats: BigIntStats } | { skipped: SkipReason };

/** Opens `name` (a held name, names.ts) in the held directory `dirFd`: a regular file with a single link (and its fstat at open), or a reason to skip it. */
export function openInHeldDirectory(dirFd: number, name: string): HeldOpen {
  const fd = openHeldName(dirFd, name);
  if (typeof fd !== "number") return fd;
  const stats = fstatSync(fd, { bigint: true });
  if (!stats.isFile() || stats.nlink > 1n) {
    closeSync(fd);
    return { skipped: stats.isFile() ? "hard-linked" : "not-a-regular-file" };
  }
  return { fd, stats };
}

/**
 * Opens `name` in the held directory `dirFd` as openInHeldDirectory does, but
 * checks nothing yet (the open is O_NONBLOCK, so even a FIFO swapped in reads
 * at once): for a reader that checks with checkHeldRead after its first read,
 * before it uses a byte (the search workers: one fstat per file, not one
 * before the read and one after).
 */
export function openHeldName(dirFd: number, name: string): number | { skipped: SkipReason } {
  if (name.includes("/") || name === "." || name === "..") return { skipped: "gone" };
  try {
    return openSync(fsPath(`/proc/self/fd/${dirFd}/`, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    // ELOOP: a symbolic link (never followed in a walk); ENOENT: removed meanwhile; EISDIR cannot happen (read-only).
    return { skipped: (error as NodeJS.ErrnoException).code === "ELOOP" ? "not-a-regular-file" : "gone" };
  }
}

/**
 * Below this much before a descriptor was opened, a ctime tells that its
 * inode's links did not change since the open: the kernel stamps a change
 * with a coarse clock (a tick behind at most), and a clock stepped back by
 * more is an operator's act, not an agent's. (A network file system stamps
 * with its server's clock: one lagging by more leaves the link count alone,
 * as before this check.)
 */
const CTIME_MARGIN_MS = 1000;

/**
 * After a read through `fd` (openHeldName(dirFd, name), opened after the time
 * `openedAfterMs`, ms since the epoch): its size when its bytes may be used,
 * or why not. A regular file with one link, and that link is the name: a
 * name that was a hard link to an outside file when it was opened, and was
 * removed since, leaves that file with one link, which the descriptor alone
 * cannot tell (the rule of openAsFound). A link added or removed since the
 * open sets the inode's ctime, so a file whose ctime is older than the open
 * had that one link, the name, all along; only a file changed about then
 * costs an lstat of the name (as openAsFound's, this inode, alone). One fstat
 * per file where the check before the open and after the read took two.
 */
export function checkHeldRead(fd: number, dirFd: number, name: string, openedAfterMs: number): { size: number } | { skipped: SkipReason } {
  const stats = fstatSync(fd);
  if (!stats.isFile()) return { skipped: "not-a-regular-file" };
  if (stats.nlink !== 1) return { skipped: "hard-linked" };
  if (stats.ctimeMs < openedAfterMs - CTIME_MARGIN_MS) return { size: stats.size };
  // BigInt stats: an inode number may not fit a double exactly.
  let named: BigIntStats;
  try {
    named = lstatSync(fsPath(`/proc/self/fd/${dirFd}/`, name), { bigint: true });
  } catch {
    return { skipped: "gone" };
  }
  const opened = fstatSync(fd, { bigint: true });
  if (named.ino !== opened.ino || named.dev !== opened.dev || opened.nlink !== 1n) return { skipped: "gone" };
  return { size: stats.size };
}

/**
 * Opens `name` as openInHeldDirectory does, and only as the inode `found`
 * (the walk's lstat of the name) showed it, with a single link: that link was
 * the name inside the workspace, so the inode had no name outside. The link
 * count of the descriptor alone can mislead: a name that was a hard link to
 * an outside file when it was opened, and was removed before the fstat,
 * leaves that file with one link. A name replaced since (an editor's save) is
 * looked at again, a few times.
 */
export function openAsFound(dirFd: number, name: string, found: BigIntStats): HeldOpen {
  for (let attempt = 1; ; attempt++) {
    if (!found.isFile()) return { skipped: "not-a-regular-file" };
    if (found.nlink !== 1n) return { skipped: "hard-linked" };
    const opened = openInHeldDirectory(dirFd, name);
    if ("skipped" in opened || (opened.stats.dev === found.dev && opened.stats.ino === found.ino)) return opened;
    closeSync(opened.fd);
    if (attempt === OPEN_ATTEMPTS) return { skipped: "kept-changing" };
    try {
      found = lstatSync(fsPath(`/proc/self/fd/${dirFd}/`, name), { bigint: true });
    } catch {
      return { skipped: "gone" };
    }
  }
}
