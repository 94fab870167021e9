// Turns Node's errno errors into FileToolsErrors that name the workspace
// path. Node's own messages carry the host path, so they never pass through.
import { FileToolsError, type ErrorReason } from "../errors.js";

export function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/**
 * Every errno the disk (or an agent's shell, or a concurrent process) can
 * cause, with a reason a client can act on. An errno not listed is the
 * daemon's own bug and stays INTERNAL.
 */
const REASONS: Record<string, [ErrorReason, (path: string) => string]> = {
  ENOENT: ["NOT_FOUND", (p) => `${p} does not exist`],
  EEXIST: ["ALREADY_EXISTS", (p) => `${p} already exists`],
  ENOTDIR: ["NOT_A_DIRECTORY", (p) => `${p} is not a directory`],
  EISDIR: ["IS_A_DIRECTORY", (p) => `${p} is a directory`],
  ENOTEMPTY: ["DIRECTORY_NOT_EMPTY", (p) => `${p} is a directory that is not empty`],
  ENAMETOOLONG: ["INVALID_PATH", (p) => `${p} is too long for the file system`],
  ELOOP: ["INVALID_PATH", (p) => `${p}: too many levels of symbolic links`],
  EILSEQ: ["INVALID_PATH", (p) => `${p} is a name the file system cannot store`],
  ENXIO: ["NOT_A_REGULAR_FILE", (p) => `${p} is not a regular file`],
  ENODEV: ["NOT_A_REGULAR_FILE", (p) => `${p} is a device or special file`],
  EINVAL: ["INVALID_ARGUMENT", (p) => `the file system refused the operation on ${p} as invalid (a directory moved into itself?)`],
  EXDEV: ["INVALID_ARGUMENT", (p) => `${p} is on another file system (a mount inside the workspace)`],
  ENOSPC: ["NO_SPACE", (p) => `no space left on the daemon's disk while writing ${p}`],
  EDQUOT: ["NO_SPACE", (p) => `the file system's disk quota is exceeded while writing ${p}`],
  EFBIG: ["QUOTA_EXCEEDED", (p) => `${p} would be too large`],
  EMLINK: ["QUOTA_EXCEEDED", (p) => `${p}: too many links or subdirectories in one directory`],
  EOVERFLOW: ["QUOTA_EXCEEDED", (p) => `${p} is too large for the operation`],
  EACCES: ["ACCESS_DENIED", (p) => `the file system denied access to ${p} (its permissions?)`],
  EPERM: ["ACCESS_DENIED", (p) => `the file system does not permit the operation on ${p} (an immutable or append-only file?)`],
  EROFS: ["ACCESS_DENIED", (p) => `${p} is on a read-only file system`],
  ETXTBSY: ["ACCESS_DENIED", (p) => `${p} is a program being run`],
  EIO: ["IO_ERROR", (p) => `an I/O error at ${p}`],
  EBUSY: ["IO_ERROR", (p) => `${p} is busy (a mount point?)`],
  EAGAIN: ["IO_ERROR", (p) => `${p} is busy; retry`],
  ESTALE: ["IO_ERROR", (p) => `${p} is a stale file handle (a network file system)`],
  EMFILE: ["IO_ERROR", (p) => `the daemon has too many open files (at ${p}); retry later`],
  ENFILE: ["IO_ERROR", (p) => `the system has too many open files (at ${p}); retry later`],
  ENOMEM: ["IO_ERROR", (p) => `out of memory at ${p}; retry later`],
  ENOTCONN: ["IO_ERROR", (p) => `the file system of ${p} is disconnected`],
  ECONNABORTED: ["IO_ERROR", (p) => `the file system of ${p} is disconnected`],
};

/**
 * The FileToolsError for an errno error at `shownPath`; errors whose code is
 * in `passthrough` (and non-errno errors) are returned unchanged for the
 * caller to handle.
 */
export function translateErrno(error: unknown, shownPath: string, passthrough: readonly string[] = []): unknown {
  const code = errnoOf(error);
  if (error instanceof FileToolsError || code === undefined || passthrough.includes(code)) return error;
  const known = REASONS[code];
  if (!known) return new FileToolsError("INTERNAL", `file system error ${code} at ${shownPath}`);
  return new FileToolsError(known[0], known[1](shownPath));
}
