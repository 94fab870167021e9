// The one rule for reading a workspace file's content (Read, Edit, Download,
// Stat's counts, Search, the snapshot packer, .gitignore files): a file with
// more than one hard link may share its inode with a file outside the
// workspace, so its bytes are never used. The rule is checked on the
// descriptor after the read completes, before the bytes are used: a file
// swapped meanwhile (or linked from outside after it was opened) is caught.
// Readers of walked files check it at open too, against an lstat of the name
// (held-open.ts): the link count of a descriptor opened through a hard link
// whose name was removed since is 1 again.
import { fstatSync } from "node:fs";
import { fail } from "../errors.js";

/** Whether the open descriptor is a regular file with a single link (now). */
export function isLoneFile(fd: number): boolean {
  const stats = fstatSync(fd);
  return stats.isFile() && stats.nlink === 1;
}

/** Refuses the bytes just read from `fd` unless it is (still) a lone regular file. */
export function assertLoneFile(fd: number, shown: string): void {
  if (!isLoneFile(fd)) fail("PATH_ESCAPES_WORKSPACE", `${shown} has more than one hard link and may be shared with a file outside the workspace`);
}
