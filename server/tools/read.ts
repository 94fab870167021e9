// Read: a window of a text file's lines, streamed (SPEC 4.1). A forward scan
// from the start, or a backward one for tail_lines (which never counts a
// large file's lines first: see tailLines).
import { fail } from "../errors.js";
import type { Entry } from "../workspace/entry.js";
import { openAndRead, type ReadableFile, type ReadSource } from "./source.js";
import { parseFilePath } from "../workspace/paths.js";
import { BINARY_HEAD_BYTES, looksBinary } from "../text/binary.js";
import { mediaTypeOf } from "../media/kind.js";
import { parseEncoding, resolveEncoding, type TextEncoding } from "../text/encoding.js";
import { readLineWindow, tailLines, wholeTextWindow, type LineChunk, type LineTrailer, type LineWindow, type LineWindowOptions } from "../text/lines.js";
import { countArgument } from "./arguments.js";
import type { LineIndex } from "../lineindex/line-index.js";
import { indexedLineWindow } from "../lineindex/window.js";

export const DEFAULT_MAX_READ_BYTES = 10 * 1024 * 1024;

export interface ReadOptions {
  startLine?: bigint;
  lineCount?: bigint;
  tailLines?: bigint;
  encoding: string;
  maxBytes?: bigint;
  /** Chunks as UTF-8 bytes (LineChunk.utf8) rather than strings, for a caller that sends them on. */
  utf8Chunks?: boolean;
}

export interface ReadHeader {
  entry: Entry;
  encoding: TextEncoding;
  totalLines?: number;
}

/** Yields the header, then the chunks; returns the trailer. */
export async function* readFile(
  /** The live workspace, or a tree at a snapshot. */
  source: ReadSource,
  rawPath: string,
  options: ReadOptions,
  serverMaxBytes: number,
  signal: AbortSignal,
  /** Line offsets of files seen before; without it every window scans from line 1. */
  lineIndex?: LineIndex,
): AsyncGenerator<ReadHeader | LineChunk, LineTrailer> {
  const parts = parseFilePath(rawPath);
  if (options.tailLines !== undefined && options.startLine !== undefined) {
    fail("INVALID_ARGUMENT", "set start_line or tail_lines, not both");
  }
  const startLine = countArgument("start_line", options.startLine, 1);
  if (startLine < 1) fail("INVALID_ARGUMENT", "start_line is 1-based: it must be at least 1");
  const lineCount = options.lineCount === undefined ? undefined : countArgument("line_count", options.lineCount, 0);
  const maxBytes = Math.min(countArgument("max_bytes", options.maxBytes, 0) || DEFAULT_MAX_READ_BYTES, serverMaxBytes);
  const utf8 = options.utf8Chunks;
  parseEncoding(options.encoding); // an unknown encoding fails before the file is opened

  const windowOptions = { startLine, lineCount, maxBytes, utf8 };
  // Everything up to the first chunk is read before the header is sent: a
  // file replaced until then is read again, whole, from its new version.
  const { file, read } = await openAndRead(source, parts, (file) => startWindow(file, options, windowOptions, lineIndex, signal));
  try {
    yield read.header;
    let next = read.first;
    for (;;) {
      if (next.done) return next.value;
      yield next.value;
      signal.throwIfAborted();
      next = await read.window.next();
    }
  } finally {
    await file.close();
  }
}

interface StartedWindow {
  header: ReadHeader;
  window: LineWindow;
  /** The window's first step, taken. */
  first: IteratorResult<LineChunk, LineTrailer>;
}

/** The header and the window of lines `options` ask for, and the window's first chunk (or trailer). */
async function startWindow(
  file: ReadableFile,
  options: ReadOptions,
  windowOptions: Omit<LineWindowOptions, "encoding">,
  lineIndex: LineIndex | undefined,
  signal: AbortSignal,
): Promise<StartedWindow> {
  const head = await file.readAt(0, BINARY_HEAD_BYTES);
  const encoding = encodingOfHead(file, head, options.encoding);
  // A file shorter than the head has just been read whole: its window needs no further read, nor the line index.
  const whole = head.length < BINARY_HEAD_BYTES ? head : undefined;
  let header: ReadHeader;
  let window: LineWindow;
  if (options.tailLines !== undefined) {
    const n = countArgument("tail_lines", options.tailLines, 0);
    // Read backwards from the end; the line count only if the index knows it already (else tailLines counts a small file, or numbers a large one's tail from the end).
    const knownTotal = lineIndex?.knownTotalLines(file, encoding);
    const tail = await tailLines((position, length) => file.readAt(position, length), file.size, n, encoding, windowOptions.maxBytes, undefined, knownTotal);
    header = { entry: file.entry, encoding, totalLines: tail.totalLines };
    window = tail.chunks;
  } else if (whole) {
    header = { entry: file.entry, encoding, totalLines: lineIndex?.knownTotalLines(file, encoding) };
    // Most small reads ask for the whole file: answered without the line window's machinery.
    const answer = wholeTextWindow(whole, { ...windowOptions, encoding });
    window = answer ? answered(answer) : readLineWindow(bytesOnce(whole), { ...windowOptions, encoding });
  } else if (lineIndex) {
    window = await indexedLineWindow(lineIndex, file, { ...windowOptions, encoding }, signal);
    header = { entry: file.entry, encoding, totalLines: lineIndex.knownTotalLines(file, encoding) };
  } else {
    header = { entry: file.entry, encoding };
    window = readLineWindow(file.chunks(), { ...windowOptions, encoding });
  }
  return { header, window, first: await window.next() };
}

/** The encoding of an open text file; BINARY_FILE when it is not text. */
export async function textEncodingOf(file: ReadableFile, requested: string): Promise<{ encoding: TextEncoding }> {
  return { encoding: encodingOfHead(file, await file.readAt(0, BINARY_HEAD_BYTES), requested) };
}

/** The encoding of a file whose first BINARY_HEAD_BYTES (or all, if shorter) are `head`; BINARY_FILE when it is not text. */
function encodingOfHead(file: ReadableFile, head: Buffer, requested: string): TextEncoding {
  const { encoding } = resolveEncoding(requested, head);
  if (looksBinary(head, encoding)) {
    // An image or a PDF: ReadMedia reads it, and the metadata says so (a dispatcher's read turns to it).
    const mediaType = mediaTypeOf(head);
    fail("BINARY_FILE", `${file.entry.path} is a binary file; use Download for its bytes`, mediaType ? { media_type: mediaType } : undefined);
  }
  return encoding;
}

async function* bytesOnce(bytes: Buffer): AsyncGenerator<Buffer> {
  yield bytes;
}

async function* answered(answer: { chunk?: LineChunk; trailer: LineTrailer }): LineWindow {
  if (answer.chunk) yield answer.chunk;
  return answer.trailer;
}
