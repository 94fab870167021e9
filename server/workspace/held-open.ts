// Opening a file by name inside a directory a walk holds open, for the
// readers of walked files: the search workers (synchronous: it runs on a
// worker thread), the snapshot packer and the live side of a diff. The
// directory was reached through the workspace's containment rules; the name
// is one entry of it (no "/"), opened with O_NOFOLLOW, so what is opened is
// inside. The one-link rule (lone-file.ts) is checked on the descriptor at
// open, and by the reader again after the read.
import { closeSync, constants, fstatSync, lstatSync, openSync, type BigIntStats } from "node:fs";
import { fsPath } from "./names.js";

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;
/** Opens of a name replaced between its lstat and its open (openAsFound), before the file is skipped as "kept-changing". */
const OPEN_ATTEMPTS = 3;

export type SkipReason = "not-a-regular-file" | "hard-linked" | "gone" | "kept-changing";
export type HeldOpen = { fd: number; stats: BigIntStats } | { skipped: SkipReason };

/** Opens `name` (a held name, names.ts) in the held directory `dirFd`: a regular file with a single link (and its fstat at open), or a reason to skip it. */
export function openInHeldDirectory(dirFd: number, name: string): HeldOpen {
  if (name.includes("/") || name === "." || name === "..") return { skipped: "gone" };
  let fd: number;
  try {
    fd = openSync(fsPath(`/proc/self/fd/${dirFd}/`, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    // ELOOP: a symbolic link (never followed in a walk); ENOENT: removed meanwhile.
    return { skipped: (error as NodeJS.ErrnoException).code === "ELOOP" ? "not-a-regular-file" : "gone" };
  }
  const stats = fstatSync(fd, { bigint: true });
  if (!stats.isFile() || stats.nlink > 1n) {
    closeSync(fd);
    return { skipped: stats.isFile() ? "hard-linked" : "not-a-regular-file" };
  }
  return { fd, stats };
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
