// Where the read-only tools (Read, Stat, List, Download) read: a live
// workspace (workspace/workspace.ts), or a tree at a stored snapshot
// (snapshots/at-snapshot.ts). Both resolve paths from lexically checked
// components (workspace/paths.ts) and answer with workspace paths only.
import { fail, FileToolsError } from "../errors.js";
import type { StreamableFile } from "../lineindex/window.js";
import type { Entry } from "../workspace/entry.js";
import { displayPath, type Components } from "../workspace/paths.js";
import type { WalkOptions } from "../workspace/walk.js";

/** Opens of a file that changed while its first reads ran (openAndRead), before the call gives up. */
const READ_ATTEMPTS = 3;

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

/**
 * Opens the file `parts` and runs `firstReads` on it: what the caller reads
 * before it answers anything. A file that changed meanwhile (CONTENT_CHANGED:
 * replaced, as an atomic write renames another file over its name, or
 * removed; or cut short, or of a new version when the line index scanned it)
 * is opened again by name and read from its start, so the caller answers from
 * one version whole: the old one, the new one, or NOT_FOUND. One that changed
 * each of READ_ATTEMPTS times is CONTENT_CHANGED. The file is left open for
 * the caller to close (closed here when this fails).
 */
export async function openAndRead<T>(source: ReadSource, parts: Components, firstReads: (file: ReadableFile) => Promise<T>): Promise<{ file: ReadableFile; read: T }> {
  for (let attempt = 1; ; attempt++) {
    const file = await source.openFile(parts);
    try {
      return { file, read: await firstReads(file) };
    } catch (error) {
      file.close();
      if (!(error instanceof FileToolsError && error.reason === "CONTENT_CHANGED")) throw error;
      if (attempt === READ_ATTEMPTS) fail("CONTENT_CHANGED", `${displayPath(parts)} was replaced or changed each time it was read; read it again`);
    }
  }
}
