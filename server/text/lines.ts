// Line windows of a text file: the forward reader behind Read's
// start_line/line_count, the backward tail behind tail_lines, and a line
// counter. No file-system access: the caller hands in a byte stream or a
// positional read function.
//
// Lines are split at line feeds (U+000A): "a\nb\n" and "a\nb" both have two
// lines, "" has none, "\n" has one (empty). A CR before the LF stays part of
// the line's text, so CRLF files come back exactly as they are.
//
// Speed: lines before the window are never decoded or allocated; they are
// counted on the raw bytes with Buffer.indexOf (memchr). Only the window is
// decoded, one line at a time, so its UTF-8 size can be held to max_bytes.

import { isUtf8 } from "node:buffer";
import { fail } from "../errors.js";
import { bomLength, codeUnitSize, createDecoder, decodeText, type TextEncoding } from "./encoding.js";

/** Largest text of one chunk, in UTF-8 bytes. */
export const READ_CHUNK_BYTES = 64 * 1024;
/** Block size of the backward scan of a tail. */
export const TAIL_BLOCK_BYTES = 64 * 1024;
/** Block size of forward line counting through a positional reader. */
const COUNT_BLOCK_BYTES = 1024 * 1024;
/**
 * A tail's line numbers need the line feeds before it counted: done when
 * there are at most this many bytes before it (about 10 ms); beyond, the
 * lines are numbered from the end (see tailLines).
 */
export const TAIL_COUNT_LIMIT_BYTES = 16 * 1024 * 1024;
/** How many further source chunks may be read, after a window is complete, to tell whether the file ends there. */
const SETTLE_READS = 2;

export interface LineChunk {
  /** 1-based number of the line `text` starts with (a line longer than a chunk continues in the next ones, which carry the same number). */
  firstLine: number;
  /** Lines with their original endings, at most READ_CHUNK_BYTES of UTF-8. Empty when `utf8` carries them. */
  text: string;
  /**
   * With the window option `utf8`: the lines as UTF-8 bytes, in place of
   * `text`. Valid only until the next chunk is asked for: it may be a view of
   * the reader's buffer, which the source may refill (copy what you keep).
   */
  utf8?: Buffer;
}

/** Summary of a window, per the proto's ReadTrailer. */
export interface LineTrailer {
  /** Lines returned; a cut line counts as one. */
  linesReturned: number;
  /** UTF-8 bytes of text returned. */
  bytesReturned: number;
  /** Line to ask for next; 0 when the window reached the end of the file. */
  nextLine: number;
  /** max_bytes stopped the window before line_count lines or the end of the file. */
  truncated: boolean;
  /** The window reached the end of the file. */
  eof: boolean;
  /** The window's single first line was longer than max_bytes and was cut. */
  lineCut: boolean;
  /** Lines in the file, known when the window reached its end. */
  totalLines?: number;
}

/** Chunks, then the trailer as the generator's return value. */
export type LineWindow = AsyncGenerator<LineChunk, LineTrailer, undefined>;

export interface LineWindowOptions {
  encoding: TextEncoding;
  /** First line, 1-based. Default 1. Past the end: no lines, eof. */
  startLine?: number;
  /** Lines wanted. undefined = to the end; 0 = none (the source is not read). */
  lineCount?: number;
  /** Cap on the UTF-8 bytes of text returned (at least 1). */
  maxBytes: number;
  /** Largest chunk text in UTF-8 bytes. Default READ_CHUNK_BYTES. */
  chunkBytes?: number;
  /**
   * Chunks carry UTF-8 bytes (`utf8`) instead of strings, for a caller that
   * sends them on: valid UTF-8 lines then pass through without being decoded
   * and encoded again.
   */
  utf8?: boolean;
}

/** Reads `length` bytes at `position`; must return all of them. */
export type ReadAt = (position: number, length: number) => Promise<Buffer>;

const LF16 = Buffer.from([0x0a, 0x00]);
const EMPTY = Buffer.alloc(0);

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Offset of the first line feed at or after `from`, or -1. For UTF-16LE
 * (`unit` 2) `buf` must start on a code unit, and only the unit 0A 00 at an
 * even offset counts (0A is also a byte of characters like U+0A05 or U+010A).
 */
export function indexOfNewline(buf: Buffer, from: number, unit: 1 | 2): number {
  if (unit === 1) return buf.indexOf(0x0a, from);
  for (let i = buf.indexOf(LF16, from); i !== -1; i = buf.indexOf(LF16, i + 1)) {
    if ((i & 1) === 0) return i;
  }
  return -1;
}

/** Offset of the last line feed starting at or before `from`, or -1. */
function lastIndexOfNewline(buf: Buffer, from: number, unit: 1 | 2): number {
  // Buffer.lastIndexOf reads a negative offset as counted from the end.
  if (from < 0) return -1;
  if (unit === 1) return buf.lastIndexOf(0x0a, from);
  for (let i = buf.lastIndexOf(LF16, from); i !== -1; i = i > 0 ? buf.lastIndexOf(LF16, i - 1) : -1) {
    if ((i & 1) === 0) return i;
  }
  return -1;
}

/** Whether `buf` (starting on a code unit) ends with a line feed; an odd UTF-16LE tail does not. */
function endsWithLineFeed(buf: Buffer, unit: 1 | 2): boolean {
  const n = buf.length;
  if (n < unit || n % unit !== 0) return false;
  return unit === 1 ? buf[n - 1] === 0x0a : buf[n - 2] === 0x0a && buf[n - 1] === 0x00;
}

/** Number of line feeds in `buf` (which starts on a code unit). */
function countNewlines(buf: Buffer, unit: 1 | 2): number {
  let count = 0;
  for (let i = indexOfNewline(buf, 0, unit); i !== -1; i = indexOfNewline(buf, i + unit, unit)) count++;
  return count;
}

function requireInteger(value: number, min: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < min) fail("INVALID_ARGUMENT", `${name} must be an integer ≥ ${min}, got ${value}`);
}

/**
 * Walks a byte stream buffer by buffer. For UTF-16LE it holds back an odd
 * last byte so that every buffer starts on a code unit and a line feed unit
 * never straddles two buffers.
 */
class ByteCursor {
  buf: Buffer = EMPTY;
  pos = 0;
  private ended = false;
  private odd: Buffer | undefined;
  private readonly it: AsyncIterator<Uint8Array>;

  constructor(
    source: AsyncIterable<Uint8Array>,
    readonly unit: 1 | 2,
  ) {
    this.it = source[Symbol.asyncIterator]();
  }

  get available(): number {
    return this.buf.length - this.pos;
  }

  /** Moves to the next non-empty buffer (call when the current one is used up); false at the end. */
  async fill(): Promise<boolean> {
    while (!this.ended) {
      const next = await this.it.next();
      if (next.done) {
        this.ended = true;
        break;
      }
      let chunk = toBuffer(next.value);
      if (this.odd) {
        chunk = Buffer.concat([this.odd, chunk]);
        this.odd = undefined;
      }
      if (this.unit === 2 && chunk.length % 2 === 1) {
        this.odd = Buffer.from(chunk.subarray(chunk.length - 1));
        chunk = chunk.subarray(0, chunk.length - 1);
      }
      if (chunk.length > 0) return this.use(chunk);
    }
    // A dangling odd byte at the very end is still content (it decodes to U+FFFD).
    if (this.odd) {
      const last = this.odd;
      this.odd = undefined;
      return this.use(last);
    }
    return false;
  }

  /** Lets the source go (an fs stream is destroyed) when we stop before its end. */
  async close(): Promise<void> {
    if (!this.ended) {
      this.ended = true;
      await this.it.return?.();
    }
  }

  /** At the start of the stream: steps over a BOM of `encoding`. */
  async skipBom(encoding: TextEncoding): Promise<void> {
    let head: Buffer = EMPTY;
    while (head.length < 3 && (await this.fill())) {
      head = head.length === 0 ? this.buf : Buffer.concat([head, this.buf]);
    }
    this.use(head);
    this.pos = bomLength(head, encoding);
  }

  private use(buf: Buffer): true {
    this.buf = buf;
    this.pos = 0;
    return true;
  }
}

/** Raw bytes of one line (with its line feed); `whole` false when it was longer than the cap and reading stopped. */
interface RawLine {
  bytes: Buffer;
  whole: boolean;
}

/** The next line's bytes, or undefined at the end of the stream. Reads at most about `cap` bytes of it. */
async function nextLine(cursor: ByteCursor, unit: 1 | 2, cap: number): Promise<RawLine | undefined> {
  const pieces: Buffer[] = [];
  let length = 0;
  for (;;) {
    if (cursor.available === 0 && !(await cursor.fill())) break;
    const i = indexOfNewline(cursor.buf, cursor.pos, unit);
    const end = i === -1 ? cursor.buf.length : i + unit;
    const piece = cursor.buf.subarray(cursor.pos, end);
    cursor.pos = end;
    length += piece.length;
    if (i !== -1) {
      pieces.push(piece);
      return { bytes: pieces.length === 1 ? piece : Buffer.concat(pieces, length), whole: true };
    }
    // Copied: the source may reuse its buffer once we ask for the next one.
    pieces.push(Buffer.from(piece));
    if (length > cap) return { bytes: Buffer.concat(pieces, length), whole: false };
  }
  return length === 0 ? undefined : { bytes: Buffer.concat(pieces, length), whole: true };
}

/** The largest offset ≤ `end` in UTF-8 bytes that falls between two characters. */
function charBoundary(utf8: Buffer, end: number): number {
  if (end >= utf8.length) return utf8.length;
  // Back up over continuation bytes (10xxxxxx) to the start of a character.
  while (end > 0 && (utf8[end]! & 0xc0) === 0x80) end--;
  return end;
}

/** The longest prefix of `text` whose UTF-8 form fits in `maxBytes`, cut between characters. */
function cutToUtf8Bytes(text: string, maxBytes: number): { text: string; size: number } {
  const utf8 = Buffer.from(text, "utf8");
  if (utf8.length <= maxBytes) return { text, size: utf8.length };
  const end = charBoundary(utf8, maxBytes);
  return { text: utf8.toString("utf8", 0, end), size: end };
}

/** Gathers lines into chunks of at most `limit` UTF-8 bytes, as strings or (`utf8`) as UTF-8 bytes. */
class ChunkBuilder {
  private parts: Array<string | Buffer> = [];
  private size = 0;
  private firstLine = 0;

  constructor(
    readonly limit: number,
    readonly utf8: boolean,
  ) {}

  /** Adds lines starting at `line`: text, or (in utf8 mode) UTF-8 bytes the builder may keep until ownParts (a view is fine). */
  *add(line: number, text: string | Buffer, size: number): Generator<LineChunk> {
    if (size > this.limit) {
      // A line longer than a chunk is sent in pieces cut between characters.
      yield* this.flush();
      const utf8 = typeof text === "string" ? Buffer.from(text, "utf8") : text;
      for (let start = 0, end = 0; start < utf8.length; start = end) {
        end = charBoundary(utf8, start + this.limit);
        yield this.utf8 ? { firstLine: line, text: "", utf8: utf8.subarray(start, end) } : { firstLine: line, text: utf8.toString("utf8", start, end) };
      }
      return;
    }
    if (this.size + size > this.limit) yield* this.flush();
    if (this.parts.length === 0) this.firstLine = line;
    this.parts.push(this.utf8 && typeof text === "string" ? Buffer.from(text, "utf8") : text);
    this.size += size;
  }

  /** Copies the parts gathered so far out of the buffers they may be views of, before the source refills them. */
  ownParts(): void {
    if (this.utf8 && this.parts.length > 0) this.parts = [Buffer.concat(this.parts as Buffer[], this.size)];
  }

  *flush(): Generator<LineChunk> {
    if (this.parts.length === 0) return;
    yield this.utf8
      ? { firstLine: this.firstLine, text: "", utf8: this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts as Buffer[], this.size) }
      : { firstLine: this.firstLine, text: this.parts.join("") };
    this.parts = [];
    this.size = 0;
  }
}

/**
 * After a complete window: does the file end here? Looks only at what is
 * buffered plus a few more chunks, so a window never costs a scan to the end.
 * `midLine`: the cursor is inside the (cut) last line. undefined = unknown.
 */
async function endsHere(cursor: ByteCursor, midLine: boolean): Promise<boolean | undefined> {
  let reads = SETTLE_READS;
  const more = async (): Promise<boolean | undefined> => (reads-- > 0 ? cursor.fill() : undefined);
  if (midLine) {
    for (;;) {
      if (cursor.available === 0) {
        const filled = await more();
        if (filled !== true) return filled === undefined ? undefined : true;
      }
      const i = indexOfNewline(cursor.buf, cursor.pos, cursor.unit);
      if (i === -1) {
        cursor.pos = cursor.buf.length;
        continue;
      }
      cursor.pos = i + cursor.unit;
      break;
    }
  }
  if (cursor.available > 0) return false;
  const filled = await more();
  return filled === undefined ? undefined : !filled;
}

/**
 * The lines [startLine, startLine + lineCount) of a text file given as a byte
 * stream (a BOM of the encoding at its start is skipped). Yields chunks and
 * returns the trailer. Reading stops once the window is complete.
 */
export function readLineWindow(source: AsyncIterable<Uint8Array>, options: LineWindowOptions): LineWindow {
  return windowOf(source, options, { firstLineNumber: 1, atFileStart: true });
}

/**
 * Like readLineWindow, for a source that starts inside the file at the start
 * of line `firstLineNumber` (a point a line index remembered): lines before
 * `startLine` are skipped from there, and no BOM is looked for.
 */
export function readLineWindowAt(source: AsyncIterable<Uint8Array>, firstLineNumber: number, options: LineWindowOptions): LineWindow {
  requireInteger(firstLineNumber, 1, "first line");
  if ((options.startLine ?? 1) < firstLineNumber) fail("INVALID_ARGUMENT", `start_line ${options.startLine ?? 1} is before the source's first line ${firstLineNumber}`);
  return windowOf(source, options, { firstLineNumber, atFileStart: false });
}

/**
 * readLineWindow's answer for the common small case, computed at once: a
 * whole file (`bytes`, no BOM, valid UTF-8) asked for from line 1 with no
 * line count short of its end, within max_bytes and one chunk. It is the one
 * chunk the generic window would send (none for an empty file) and its
 * trailer, with no cursor, decoding or generators; undefined when the case is
 * not that one (the caller takes readLineWindow).
 */
export function wholeTextWindow(bytes: Buffer, options: LineWindowOptions): { chunk?: LineChunk; trailer: LineTrailer } | undefined {
  const { encoding, startLine = 1, lineCount, maxBytes } = options;
  if (encoding !== "utf-8" || startLine !== 1 || bytes.length > maxBytes || bytes.length > (options.chunkBytes ?? READ_CHUNK_BYTES)) return undefined;
  if (bomLength(bytes, encoding) > 0 || !isUtf8(bytes)) return undefined;
  // "a\nb" and "a\nb\n" both have two lines; "" has none.
  const lines = countNewlines(bytes, 1) + (bytes.length > 0 && !endsWithLineFeed(bytes, 1) ? 1 : 0);
  if (lineCount !== undefined && (lineCount === 0 || lineCount < lines)) return undefined;
  const trailer: LineTrailer = { linesReturned: lines, bytesReturned: bytes.length, nextLine: 0, truncated: false, eof: true, lineCut: false, totalLines: lines };
  if (bytes.length === 0) return { trailer };
  return { chunk: options.utf8 ? { firstLine: 1, text: "", utf8: bytes } : { firstLine: 1, text: bytes.toString("utf8") }, trailer };
}

/** Where the source starts in the file: the number of its first line, and whether it may begin with a BOM. */
interface SourcePlace {
  firstLineNumber: number;
  atFileStart: boolean;
}

async function* windowOf(source: AsyncIterable<Uint8Array>, options: LineWindowOptions, place: SourcePlace): LineWindow {
  const startLine = options.startLine ?? 1;
  requireInteger(startLine, 1, "start_line");
  if (options.lineCount !== undefined) requireInteger(options.lineCount, 0, "line_count");
  if (!(options.maxBytes >= 1)) fail("INVALID_ARGUMENT", `max_bytes must be ≥ 1, got ${options.maxBytes}`);
  const empty: LineTrailer = { linesReturned: 0, bytesReturned: 0, nextLine: startLine, truncated: false, eof: false, lineCut: false };
  // Metadata only: nothing to read.
  if (options.lineCount === 0) return empty;

  const cursor = new ByteCursor(source, codeUnitSize(options.encoding));
  try {
    if (place.atFileStart) await cursor.skipBom(options.encoding);
    const skipped = await skipLines(cursor, place.firstLineNumber, startLine);
    if (skipped.line < startLine) {
      // The file ended before the window: past the end.
      const totalLines = skipped.atLineStart ? skipped.line - 1 : skipped.line;
      return { ...empty, nextLine: 0, eof: true, totalLines };
    }
    return yield* windowLines(cursor, startLine, options);
  } finally {
    await cursor.close();
  }
}

/**
 * Moves the cursor from line `line` to the start of `startLine`, counting
 * line feeds on the raw bytes: no decoding, no allocation per line. Returns
 * the line reached (less than startLine when the stream ended first) and
 * whether the stream ended right after a line feed.
 */
async function skipLines(cursor: ByteCursor, line: number, startLine: number): Promise<{ line: number; atLineStart: boolean }> {
  const unit = cursor.unit;
  let atLineStart = true;
  while (line < startLine) {
    if (cursor.available === 0 && !(await cursor.fill())) break;
    const buf = cursor.buf;
    let pos = cursor.pos;
    for (let i = indexOfNewline(buf, pos, unit); i !== -1; i = indexOfNewline(buf, pos, unit)) {
      pos = i + unit;
      if (++line === startLine) break;
    }
    // Short of the window, the rest of this buffer belongs to the current line.
    atLineStart = line === startLine || pos === buf.length;
    cursor.pos = line === startLine ? pos : buf.length;
  }
  return { line, atLineStart };
}

/**
 * The most UTF-8 bytes one source byte can decode to: an invalid byte becomes
 * U+FFFD (3 bytes), a latin1 byte above 0x7F takes 2, and a UTF-16 unit (2
 * bytes) at most 3.
 */
const MAX_UTF8_GROWTH: Record<TextEncoding, number> = { "utf-8": 3, ascii: 3, latin1: 2, "utf-16le": 1.5 };

/**
 * The whole lines at the cursor within the buffer in hand, at most `maxLines`
 * of them in at most `maxBytes` raw bytes (at least one line, else undefined).
 * The cursor does not move.
 */
function wholeLines(cursor: ByteCursor, maxBytes: number, maxLines: number): { bytes: Buffer; lines: number } | undefined {
  const { buf, pos, unit } = cursor;
  const limit = Math.min(buf.length, pos + maxBytes);
  let end = pos;
  let lines = 0;
  for (let i = indexOfNewline(buf, pos, unit); i !== -1 && i + unit <= limit && lines < maxLines; i = indexOfNewline(buf, end, unit)) {
    end = i + unit;
    lines++;
  }
  return lines === 0 ? undefined : { bytes: buf.subarray(pos, end), lines };
}

/** The window proper, from the start of `startLine`: decodes whole lines in blocks (a line at a time across buffers) within max_bytes. */
async function* windowLines(cursor: ByteCursor, startLine: number, options: LineWindowOptions): LineWindow {
  const { encoding, lineCount, maxBytes } = options;
  const unit = cursor.unit;
  const chunks = new ChunkBuilder(options.chunkBytes ?? READ_CHUNK_BYTES, options.utf8 === true);
  const trailer: LineTrailer = { linesReturned: 0, bytesReturned: 0, nextLine: 0, truncated: false, eof: false, lineCut: false };
  let line = startLine;
  let remaining = maxBytes;
  let end: "count" | "eof" | "full" | "cut" = "count";
  let midLine = false; // the cursor is inside the cut line
  while (lineCount === undefined || trailer.linesReturned < lineCount) {
    // Whole lines already in the buffer go together: valid UTF-8 wanted as UTF-8 as it is (a view of the
    // buffer: the consumer copies it, once, into its message), else one string per block, not per line.
    const budget = Math.min(remaining, chunks.limit);
    const wanted = lineCount === undefined ? Infinity : lineCount - trailer.linesReturned;
    let block = wholeLines(cursor, budget, wanted);
    const passThrough = block !== undefined && chunks.utf8 && encoding === "utf-8" && isUtf8(block.bytes);
    // A block to decode is kept small enough that even its worst decoding fits in what is left.
    if (block && !passThrough) block = wholeLines(cursor, Math.floor(budget / MAX_UTF8_GROWTH[encoding]), wanted);
    if (block) {
      const text = passThrough ? block.bytes : decodeText(block.bytes, encoding);
      const size = passThrough ? block.bytes.length : Buffer.byteLength(text, "utf8");
      cursor.pos += block.bytes.length;
      yield* chunks.add(line, text, size);
      line += block.lines;
      trailer.linesReturned += block.lines;
      trailer.bytesReturned += size;
      remaining -= size;
      continue;
    }
    // Raw bytes beyond which a line surely decodes to more than `remaining`
    // UTF-8 bytes (a byte gives at least one, a UTF-16 unit at least one).
    chunks.ownParts(); // nextLine may refill the cursor's buffer
    const raw = await nextLine(cursor, unit, remaining * unit + 8);
    if (!raw) {
      end = "eof";
      break;
    }
    // A line stopped by the cap may end inside a character: the stream decoder holds that back.
    const text = raw.whole ? decodeText(raw.bytes, encoding) : createDecoder(encoding).write(raw.bytes);
    const size = raw.whole ? Buffer.byteLength(text, "utf8") : Infinity;
    if (size <= remaining) {
      yield* chunks.add(line++, text, size);
      trailer.linesReturned++;
      trailer.bytesReturned += size;
      remaining -= size;
    } else if (trailer.linesReturned === 0) {
      // The first line alone is longer than max_bytes: send its beginning.
      const cut = cutToUtf8Bytes(text, remaining);
      yield* chunks.add(line++, cut.text, cut.size);
      Object.assign(trailer, { linesReturned: 1, bytesReturned: cut.size, lineCut: true });
      midLine = !raw.whole;
      end = "cut";
      break;
    } else {
      // This line does not fit: the window stops before it.
      end = "full";
      break;
    }
  }
  yield* chunks.flush();

  if (end === "full") return { ...trailer, nextLine: line, truncated: true };
  const eof = end === "eof" || (await endsHere(cursor, midLine));
  if (eof === true) return { ...trailer, nextLine: 0, eof: true, totalLines: line - 1 };
  // After a cut, max_bytes is used up: the window stopped early unless that line was all it wanted.
  const truncated = end === "cut" && (lineCount === undefined || lineCount > 1);
  return { ...trailer, nextLine: line, truncated };
}

/** Counts the lines of a text file given as a byte stream (a BOM of the encoding is skipped). */
export async function countLines(source: AsyncIterable<Uint8Array>, encoding: TextEncoding): Promise<number> {
  const unit = codeUnitSize(encoding);
  const cursor = new ByteCursor(source, unit);
  await cursor.skipBom(encoding);
  let newlines = 0;
  let endsWithNewline = true; // true for empty content: no unterminated last line
  for (let more = cursor.available > 0 || (await cursor.fill()); more; more = await cursor.fill()) {
    const buf = cursor.pos === 0 ? cursor.buf : cursor.buf.subarray(cursor.pos);
    newlines += countNewlines(buf, unit);
    endsWithNewline = endsWithLineFeed(buf, unit);
    cursor.pos = cursor.buf.length;
  }
  return endsWithNewline ? newlines : newlines + 1;
}

/** The window of a tail. */
export interface TailWindow {
  /** Lines in the file, when known before any chunk (counted, or given). */
  totalLines?: number;
  /**
   * Number of the first line of the tail (totalLines + 1 when it is empty).
   * Without totalLines, counted from the end: -1 is the last line.
   */
  firstLine: number;
  /** Chunks and trailer, as readLineWindow gives them (numbered as firstLine is). */
  chunks: LineWindow;
}

async function readExactly(readAt: ReadAt, position: number, length: number): Promise<Buffer> {
  const buf = await readAt(position, length);
  // A short read means the file shrank under us: refuse rather than serve wrong lines.
  if (buf.length !== length) fail("CONTENT_CHANGED", "the file changed while it was being read");
  return buf;
}

/** Bytes [start, end) through a positional reader, in blocks. */
async function* rangeOf(readAt: ReadAt, start: number, end: number, block: number): AsyncGenerator<Buffer> {
  for (let pos = start; pos < end; pos += block) yield readExactly(readAt, pos, Math.min(block, end - pos));
}

/** Line feeds in [start, end) (start on a code unit), counted in large blocks. */
async function countNewlinesIn(readAt: ReadAt, start: number, end: number, unit: 1 | 2): Promise<number> {
  let count = 0;
  for await (const block of rangeOf(readAt, start, end, COUNT_BLOCK_BYTES)) count += countNewlines(block, unit);
  return count;
}

/**
 * The last `n` lines of a file of `size` bytes read through `readAt`. Finds
 * where they start by reading backwards in TAIL_BLOCK_BYTES blocks (a final
 * line feed ends the last line, it does not start an empty one), then reads
 * the tail forwards with the same chunking and max_bytes rules as
 * readLineWindow. If the tail is longer than max_bytes its first lines are
 * returned, `truncated` is set and `nextLine` continues from there, as for
 * any window.
 *
 * Line numbers: from `knownTotalLines`, or from a forward count of the line
 * feeds before the tail when that part is at most `countLimitBytes` (or the
 * tail may be cut, which needs a real `nextLine`). Otherwise nothing before
 * the tail is read: totalLines is left unknown and the tail's lines are
 * numbered from the end, -n to -1 (the trailer then has no totalLines).
 */
export async function tailLines(
  readAt: ReadAt,
  size: number,
  n: number,
  encoding: TextEncoding,
  maxBytes: number,
  chunkBytes: number = READ_CHUNK_BYTES,
  /** The file's line count when already known (a line index): spares the forward count. */
  knownTotalLines?: number,
  countLimitBytes: number = TAIL_COUNT_LIMIT_BYTES,
): Promise<TailWindow> {
  requireInteger(n, 0, "tail_lines");
  requireInteger(size, 0, "size");
  if (!(maxBytes >= 1)) fail("INVALID_ARGUMENT", `max_bytes must be ≥ 1, got ${maxBytes}`);
  const unit = codeUnitSize(encoding);
  const contentStart = size === 0 ? 0 : bomLength(await readExactly(readAt, 0, Math.min(size, 3)), encoding);
  // For UTF-16LE an odd last byte is a broken unit: no line feed can be there.
  const alignedEnd = contentStart + Math.floor((size - contentStart) / unit) * unit;
  const lastUnit = alignedEnd > contentStart ? await readExactly(readAt, alignedEnd - unit, unit) : EMPTY;
  const endsWithNewline = alignedEnd === size && endsWithLineFeed(lastUnit, unit);

  const finished = (totalLines: number | undefined): TailWindow => ({
    totalLines,
    firstLine: totalLines === undefined ? 0 : totalLines + 1,
    chunks: (async function* (): LineWindow {
      const trailer = { linesReturned: 0, bytesReturned: 0, nextLine: 0, truncated: false, eof: true, lineCut: false };
      return { ...trailer, totalLines };
    })(),
  });
  if (size === contentStart) return finished(0);
  if (n === 0) {
    if (knownTotalLines !== undefined) return finished(knownTotalLines);
    if (alignedEnd - contentStart > countLimitBytes) return finished(undefined);
    const newlines = await countNewlinesIn(readAt, contentStart, alignedEnd, unit);
    return finished(endsWithNewline ? newlines : newlines + 1);
  }

  // Backwards to the n-th line feed before the last line's end.
  const searchEnd = endsWithNewline ? alignedEnd - unit : alignedEnd;
  let found = 0;
  let start = contentStart;
  scan: for (let pos = searchEnd; pos > contentStart; ) {
    // Block bounds stay on code units: pos and contentStart are, and the block size is even.
    const from = Math.max(contentStart, pos - TAIL_BLOCK_BYTES);
    const block = await readExactly(readAt, from, pos - from);
    for (let i = lastIndexOfNewline(block, block.length - unit, unit); i !== -1; i = lastIndexOfNewline(block, i - 1, unit)) {
      if (++found === n) {
        start = from + i + unit;
        break scan;
      }
    }
    pos = from;
  }
  // Fewer than n line feeds: the whole file, whose first line has none before it.
  const tailCount = found === n ? n : found + 1;
  const tailBytes = () => rangeOf(readAt, start, size, TAIL_BLOCK_BYTES);
  const mayBeCut = (size - start) * MAX_UTF8_GROWTH[encoding] > maxBytes;
  if (start !== contentStart && knownTotalLines === undefined && start - contentStart > countLimitBytes && !mayBeCut) {
    const fromEnd = windowOf(tailBytes(), { encoding, maxBytes, chunkBytes }, { firstLineNumber: 1, atFileStart: false });
    return { firstLine: -tailCount, chunks: numberedFromEnd(fromEnd, tailCount) };
  }
  const linesBefore =
    start === contentStart ? 0 : knownTotalLines !== undefined ? knownTotalLines - tailCount : await countNewlinesIn(readAt, contentStart, start, unit);
  const firstLine = linesBefore + 1;
  const chunks = windowOf(tailBytes(), { encoding, startLine: firstLine, maxBytes, chunkBytes }, { firstLineNumber: firstLine, atFileStart: false });
  return { totalLines: linesBefore + tailCount, firstLine, chunks };
}

/** A whole tail of `count` lines, numbered from 1, renumbered -count to -1; its trailer has no line count. */
async function* numberedFromEnd(window: LineWindow, count: number): LineWindow {
  for (;;) {
    const next = await window.next();
    if (next.done) {
      const { totalLines: _countedFromTheTail, ...trailer } = next.value;
      return trailer;
    }
    yield { ...next.value, firstLine: next.value.firstLine - count - 1 };
  }
}
