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
    from.offset === 0 ? readLineWindow(file.chunks(0), options) : readLineWindowAt(reusedChunks(index, file, from.offset), from.line, options);
  return recordingTotal(index, file, options.encoding, window);
}

/** Passes the window through; a window that reached the end tells the index the line count. */
async function* recordingTotal(index: LineIndex, file: IndexedFile, encoding: TextEncoding, window: LineWindow): LineWindow {
  const trailer: LineTrailer = yield* window;
  if (trailer.eof && trailer.totalLines !== undefined) await index.recordTotalLines(file, encoding, trailer.totalLines);
  return trailer;
}

/**
 * The bytes from `position` to the end, read again and again into one pooled
 * buffer: each chunk is valid until the next is asked for, which is all the
 * line reader needs (it copies what it keeps across chunks).
 */
async function* reusedChunks(index: LineIndex, file: IndexedFile, position: number): AsyncGenerator<Buffer> {
  const buffer = index.takeWindowBuffer();
  try {
    for (;;) {
      const length = await file.readInto(buffer, position);
      if (length === 0) return;
      position += length;
      yield buffer.subarray(0, length);
    }
  } finally {
    index.giveWindowBuffer(buffer);
  }
}
