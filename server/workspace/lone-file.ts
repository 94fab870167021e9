// The one rule for reading a workspace file's content (Read, Edit, Download,
// Stat's counts, Search, the snapshot packer, .gitignore files): a file with
// more than one hard link may share its inode with a file outside the
// workspace, so its bytes are never used. The rule is checked on the
// descriptor after the read completes, before the bytes are used: a file
// swapped meanwhile (or linked from outside after it was opened) is caught.
// Readers check it at open too, against the lstat of the name made before
// the open (held-open.ts for walked files, Workspace.openFile; the search
// workers once, after the first read: checkHeldRead): the link count of a
// descriptor opened through a hard link whose name was removed since is 1
// again. The snapshot packer and live diffs check by name after the read
// (isLoneByName).
import { fstatSync, lstatSync, readlinkSync, renameSync, type BigIntStats } from "node:fs";
import { fail } from "../errors.js";
import { errnoOf } from "./errno.js";
import { bytesOfName, fsPath } from "./names.js";

/** Whether the open descriptor is a regular file with a single link (now). */
export function isLoneFile(fd: number): boolean {
  const stats = fstatSync(fd);
  return stats.isFile() && stats.nlink === 1;
}

/**
 * Refuses the bytes just read from `fd` unless it is (still) a lone regular
 * file: PATH_ESCAPES_WORKSPACE when it has more than one link; CONTENT_CHANGED
 * when it has none, replaced (an atomic write renamed another file over its
 * name) or removed since it was opened: opened again by name, it is the new
 * file (openAndRead).
 */
export function assertLoneFile(fd: number, shown: string): void {
  const stats = fstatSync(fd);
  if (stats.isFile() && stats.nlink === 1) return;
  if (stats.isFile() && stats.nlink === 0) fail("CONTENT_CHANGED", `${shown} was replaced or removed while it was being read; read it again`);
  fail("PATH_ESCAPES_WORKSPACE", `${shown} has more than one hard link and may be shared with a file outside the workspace`);
}

/**
 * isLoneFile, and proof that its one link is the name `name` in the held
 * directory `dirFd` it was opened by: for readers whose bytes leave the
 * daemon (the snapshot packer). An unlink drops the link count before it
 * removes the name, so for a while a descriptor opened through a hard link to
 * an outside file reads as lone, and an unlink stalled there (a busy machine)
 * lets every other check pass. So, after the fstat, the name is renamed onto
 * itself: that changes nothing (the kernel returns before the file system is
 * asked) but takes the directory's lock, which an unlink there holds until
 * the name is gone. Then the descriptor's /proc link must still be the name
 * in that directory: a removed name reads " (deleted)" for good, a moved one
 * elsewhere. Measured against another process swapping a name between a
 * plain file and a hard link to an outside file flat out: the link count
 * alone let 552 reads in 273,867 through, this none in 541,937 (the check
 * costs about 15 µs a file). A name that itself ends in " (deleted)" is told
 * from a removed one by the other checks only; on a mount where the rename
 * is refused (read-only), the lock is not taken; past the depth /proc shows
 * a path for, the name is looked up instead (which a second unlink stalled
 * just then could fool).
 */
export function isLoneByName(fd: number, dirFd: number, name: string): boolean {
  if (!isLoneFile(fd)) return false;
  const at = fsPath(`/proc/self/fd/${dirFd}/`, name);
  try {
    renameSync(at, at);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return false;
  }
  try {
    const link = readlinkSync(`/proc/self/fd/${fd}`, { encoding: "buffer" });
    return link.equals(Buffer.concat([readlinkSync(`/proc/self/fd/${dirFd}`, { encoding: "buffer" }), Buffer.from("/"), bytesOfName(name)]));
  } catch (error) {
    if (errnoOf(error) !== "ENAMETOOLONG") throw error;
  }
  // Deeper than /proc shows a path (4,095 bytes from /): the name, looked up once the lock was taken, must be this inode, alone.
  let named: BigIntStats;
  try {
    named = lstatSync(at, { bigint: true });
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return false;
    throw error;
  }
  const opened = fstatSync(fd, { bigint: true });
  return named.dev === opened.dev && named.ino === opened.ino && named.nlink === 1n;
}
