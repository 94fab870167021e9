// The one set of tree limits. What the API lets a workspace hold (Write,
// MakeDir, Move, Upload, ImportArchive, RestoreSnapshot check these where
// trees are created), a snapshot carries and a restore accepts: the packer
// refuses a tree past them (one an agent's shell made) with a clear error
// rather than store a snapshot no daemon could restore.

/** Components below the root in any path. */
export const MAX_DEPTH = 1024;
/**
 * Bytes of a path below the root, components joined by "/" (no leading "/"):
 * 4096 with the leading "/", and the longest relative path a system call
 * takes (PATH_MAX counts the NUL), so GNU tar can extract it too.
 */
export const MAX_PATH_BYTES = 4095;
/** Bytes of one component (Linux NAME_MAX). */
export const MAX_COMPONENT_BYTES = 255;
/** Bytes of a symbolic link's target (Linux PATH_MAX less the NUL). */
export const MAX_SYMLINK_TARGET_BYTES = 4095;
/** Entries (files, directories, links) in one snapshot or archive. */
export const MAX_ENTRIES = 1_000_000;
/** Bytes of regular-file content in one snapshot or archive. */
export const MAX_CONTENT_BYTES = 16 * 1024 ** 3;
