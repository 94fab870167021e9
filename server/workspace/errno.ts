// Turns Node's errno errors into FileToolsErrors that name the workspace
// path. Node's own messages carry the host path, so they never pass through.
import { FileToolsError, type ErrorReason } from "../errors.js";

export function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

const REASONS: Record<string, [ErrorReason, (path: string) => string]> = {
  ENOENT: ["NOT_FOUND", (p) => `${p} does not exist`],
  EEXIST: ["ALREADY_EXISTS", (p) => `${p} already exists`],
  ENOTDIR: ["NOT_A_DIRECTORY", (p) => `${p} is not a directory`],
  EISDIR: ["IS_A_DIRECTORY", (p) => `${p} is a directory`],
  ENOTEMPTY: ["DIRECTORY_NOT_EMPTY", (p) => `${p} is a directory that is not empty`],
  ENAMETOOLONG: ["INVALID_PATH", (p) => `${p} is too long for the file system`],
  ELOOP: ["INVALID_PATH", (p) => `${p}: too many levels of symbolic links`],
  ENXIO: ["NOT_A_REGULAR_FILE", (p) => `${p} is not a regular file`],
  ENOSPC: ["QUOTA_EXCEEDED", (p) => `no space left on the device while writing ${p}`],
  EDQUOT: ["QUOTA_EXCEEDED", (p) => `disk quota exceeded while writing ${p}`],
  EFBIG: ["QUOTA_EXCEEDED", (p) => `${p} would be too large`],
  EACCES: ["INTERNAL", (p) => `the host file system denied access to ${p}`],
  EPERM: ["INTERNAL", (p) => `the host file system refused the operation on ${p}`],
  EROFS: ["INTERNAL", (p) => `${p} is on a read-only file system`],
  EXDEV: ["INTERNAL", (p) => `${p} is on another file system (a mount inside the workspace)`],
  EBUSY: ["INTERNAL", (p) => `${p} is busy (a mount point?)`],
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
