// Where the read-only tools (Read, Stat, List, Download) read: a live
// workspace (workspace/workspace.ts), or a tree at a stored snapshot
// (snapshots/at-snapshot.ts). Both resolve paths from lexically checked
// components (workspace/paths.ts) and answer with workspace paths only.
import type { StreamableFile } from "../lineindex/window.js";
import type { Entry } from "../workspace/entry.js";
import type { Components } from "../workspace/paths.js";
import type { WalkOptions } from "../workspace/walk.js";

/** A regular file opened for reading: the workspace's OpenFile, or a file of a snapshot. */
export interface ReadableFile extends StreamableFile {
  /** The file as it was opened. */
  readonly entry: Entry;
  readonly size: number;
  /** Up to `length` bytes at `position` (fewer at the end of the file). */
  readAt(position: number, length: number): Promise<Buffer>;
  /** The bytes from `position` to the end, in buffers of at most `chunkBytes`. */
  chunks(position?: number, chunkBytes?: number): AsyncIterable<Buffer>;
  /** SHA-256 (hex) of the whole file, when known without reading it (a snapshot's table of contents). */
  readonly sha256?: string;
  /** Lets go of what the file holds (its descriptor, reads still in flight). */
  close(): void;
}

export interface ReadSource {
  /** The entry itself (a symlink is described, not followed). */
  stat(parts: Components): Promise<Entry>;
  /** A regular file, following symlinks that stay inside. */
  openFile(parts: Components): Promise<ReadableFile>;
  /** Entries below a directory, in walk order (walk.ts). */
  walk(parts: Components, options: Pick<WalkOptions, "recursive" | "maxDepth" | "includeHidden" | "respectGitignore">): AsyncIterable<Entry>;
}
