// Opening a file by name inside a directory the walk holds open, for the
// search workers (synchronous: it runs on a worker thread). The directory was
// reached through the workspace's containment rules; the name is one entry of
// it (no "/"), opened with O_NOFOLLOW, so what is opened is inside.
import { closeSync, constants, fstatSync, openSync } from "node:fs";
import { fsPath } from "./names.js";

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;

export type HeldOpen = { fd: number; size: number } | { skipped: "not-a-regular-file" | "hard-linked" | "gone" };

/** Opens `name` (a held name, names.ts) in the held directory `dirFd`: a regular file with a single link, or a reason to skip it. */
export function openInHeldDirectory(dirFd: number, name: string): HeldOpen {
  if (name.includes("/") || name === "." || name === "..") return { skipped: "gone" };
  let fd: number;
  try {
    fd = openSync(fsPath(`/proc/self/fd/${dirFd}/`, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    // ELOOP: a symbolic link (never followed in a walk); ENOENT: removed meanwhile.
    return { skipped: (error as NodeJS.ErrnoException).code === "ELOOP" ? "not-a-regular-file" : "gone" };
  }
  const stats = fstatSync(fd);
  if (!stats.isFile() || stats.nlink > 1) {
    closeSync(fd);
    return { skipped: stats.isFile() ? "hard-linked" : "not-a-regular-file" };
  }
  return { fd, size: stats.size };
}
