// Line windows through the line index: seek to the nearest known line start,
// read forward from there, and remember the line count when a window reaches
// the end of the file.
import type { TextEncoding } from "../text/encoding.js";
import { readLineWindow, readLineWindowAt, type LineTrailer, type LineWindow, type LineWindowOptions } from "../text/lines.js";
import type { IndexedFile, LineIndex } from "./line-index.js";

/** An IndexedFile that can also stream its bytes from a position (the workspace's OpenFile). */
export interface StreamableFile extends IndexedFile {
  chunks(position?: number, chunkBytes?: number): AsyncIterable<Uint8Array>;
}

/**
 * Read size of a window that starts at a checkpoint: what lies before its
 * first line is at most about a byte stride, so smaller reads than a scan's.
 */
const WINDOW_READ_BYTES = 256 * 1024;

/**
 * The window `options` asks for, read from the index's nearest line start at
 * or before start_line (scanning and indexing up to it first when the index
 * does not reach that far). Chunks and trailer are those of readLineWindow.
 */
export async function indexedLineWindow(
  index: LineIndex,
  file: StreamableFile,
  options: LineWindowOptions,
  signal?: AbortSignal,
): Promise<LineWindow> {
  // Metadata only: nothing to read, nothing to index.
  if (options.lineCount === 0) return readLineWindow(file.chunks(0), options);
  const from = await index.seek(file, options.encoding, options.startLine ?? 1, signal);
  const window =
    from.offset === 0 ? readLineWindow(file.chunks(0), options) : readLineWindowAt(file.chunks(from.offset, WINDOW_READ_BYTES), from.line, options);
  return recordingTotal(index, file, options.encoding, window);
}

/** Passes the window through; a window that reached the end tells the index the line count. */
async function* recordingTotal(index: LineIndex, file: IndexedFile, encoding: TextEncoding, window: LineWindow): LineWindow {
  const trailer: LineTrailer = yield* window;
  if (trailer.eof && trailer.totalLines !== undefined) await index.recordTotalLines(file, encoding, trailer.totalLines);
  return trailer;
}
