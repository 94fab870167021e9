// A sparse line index: the byte offset of every Nth line of the files the
// daemon has scanned, so that a window anywhere in a file seen once costs
// O(window) rather than O(offset).
//
// - Built while reading: a window past what is known scans forward from the
//   furthest known line (the frontier) in 1 MiB reads, counting line feeds on
//   the raw bytes with Buffer.indexOf, and records a checkpoint every
//   `lineStride` lines or `byteStride` bytes, whichever comes first (so a file
//   of very long lines is indexed too). No per-line objects.
// - Keyed by the file's version (a hash of device, inode, size, mtime and
//   ctime) and the encoding: a changed file is a different key; stale keys age
//   out of the LRU. A scan's checkpoints count only once the file is seen
//   unchanged after it (a fresh fstat); otherwise the entry is dropped and the
//   call fails with CONTENT_CHANGED.
// - One scan at a time per key: concurrent first readers wait for it and then
//   find their line known (or extend from where it stopped).
// - Bounded: at most `maxCheckpointsPerFile` checkpoints a file (past that,
//   every other one is dropped and the strides double) and `budgetBytes` for
//   all files together (least recently used files are dropped first).
//
// The index never opens a file: it reads through an IndexedFile (the
// workspace's OpenFile) that the caller holds open for the duration of a call.

import { fail, FileToolsError } from "../errors.js";
import { bomLength, codeUnitSize, type TextEncoding } from "../text/encoding.js";
import { indexOfNewline } from "../text/lines.js";
import { createNewlineScanner, type NewlineScanner } from "./newlines.js";

/** What the index needs of an open file (the workspace's OpenFile has it). */
export interface IndexedFile {
  /** The file as it was opened. */
  readonly entry: { readonly version: string; readonly size: bigint };
  /** Fills `buffer` from `position` (less at the end of the file); resolves to the bytes read. */
  readInto(buffer: Buffer, position: number): Promise<number>;
  /** The version now, from a fresh fstat. */
  currentVersion(): Promise<string>;
}

export interface LineIndexOptions {
  /** A checkpoint at least every this many lines. */
  lineStride?: number;
  /** A checkpoint at the first line start at least this many bytes after the previous one. */
  byteStride?: number;
  /** Memory for all files' checkpoints together. */
  budgetBytes?: number;
  /** Checkpoints kept for one file before they are thinned out. */
  maxCheckpointsPerFile?: number;
  /** Read size of a scan. */
  scanChunkBytes?: number;
  /** Scans running at once (each holds 2 MiB of buffers); more wait their turn. */
  maxConcurrentScans?: number;
  /** Search with Buffer.indexOf even where WebAssembly SIMD is available (tests). */
  portable?: boolean;
}

export const DEFAULT_LINE_STRIDE = 1024;
export const DEFAULT_BYTE_STRIDE = 256 * 1024;
export const DEFAULT_BUDGET_BYTES = 16 * 1024 * 1024;
export const DEFAULT_MAX_CHECKPOINTS_PER_FILE = 64 * 1024;
export const SCAN_CHUNK_BYTES = 1024 * 1024;
export const DEFAULT_MAX_CONCURRENT_SCANS = 4;
/**
 * Read size of a window that starts at a checkpoint: what lies before its
 * first line is at most about a byte stride, so smaller reads than a scan's.
 */
export const WINDOW_READ_BYTES = 256 * 1024;
/** Window read buffers kept for reuse, so that windows leave no garbage behind. */
const SPARE_WINDOW_BUFFERS = 8;
/** Scanners (two read buffers each) kept for reuse: fresh 1 MiB buffers cost page faults, and a scan reading into reused ones runs about twice as fast. */
const SPARE_SCANNERS = 2;

/** A line known to start at a byte offset. Line 1 is at offset 0, before any BOM. */
export interface Checkpoint {
  line: number;
  offset: number;
}

/** Fixed cost of a file's entry besides its checkpoint arrays (object, key, arrays' headers). */
const ENTRY_OVERHEAD_BYTES = 512;
const INITIAL_CAPACITY = 64;

class FileIndex {
  /** Checkpoints after line 1, in increasing order: lines[i] starts at offsets[i]. */
  lines = new Float64Array(INITIAL_CAPACITY);
  offsets = new Float64Array(INITIAL_CAPACITY);
  count = 0;
  /** The furthest line whose start is known (verified); every checkpoint before it is recorded. */
  frontierLine = 1;
  frontierOffset = 0;
  /** Where line 1's text starts (after a BOM); known after the first scan. */
  contentStart = 0;
  /** Lines in the file: known once a scan, or a window read to the end, got there. */
  totalLines: number | undefined;
  /** True once a scan reached the end: every checkpoint of the file is recorded. */
  scannedToEnd = false;
  /** The scan in flight, if any. */
  scanning: Promise<void> | undefined;
  /** Bytes counted against the budget. */
  accounted = 0;

  constructor(
    readonly key: string,
    readonly version: string,
    readonly size: number,
    readonly encoding: TextEncoding,
    public lineStride: number,
    public byteStride: number,
  ) {}

  get unit(): 1 | 2 {
    return codeUnitSize(this.encoding);
  }

  get bytes(): number {
    return ENTRY_OVERHEAD_BYTES + this.lines.length * 16;
  }

  get lastLine(): number {
    return this.count === 0 ? 1 : this.lines[this.count - 1]!;
  }

  get lastOffset(): number {
    return this.count === 0 ? 0 : this.offsets[this.count - 1]!;
  }

  /** The known line start nearest before or at `line`. */
  find(line: number): Checkpoint {
    if (line >= this.frontierLine) return { line: this.frontierLine, offset: this.frontierOffset };
    // Largest checkpoint ≤ line (all of them are before the frontier).
    let lo = 0;
    let hi = this.count - 1;
    let best = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.lines[mid]! <= line) {
        best = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return best === -1 ? { line: 1, offset: 0 } : { line: this.lines[best]!, offset: this.offsets[best]! };
  }

  push(line: number, offset: number, max: number): void {
    if (this.count === this.lines.length) {
      if (this.count >= max) this.thin();
      else this.grow(Math.min(max, this.lines.length * 2));
    }
    this.lines[this.count] = line;
    this.offsets[this.count] = offset;
    this.count++;
  }

  /** Forgets checkpoints past the frontier (those of a scan that did not complete). */
  rollback(): void {
    while (this.count > 0 && this.lines[this.count - 1]! > this.frontierLine) this.count--;
  }

  private grow(capacity: number): void {
    const lines = new Float64Array(capacity);
    const offsets = new Float64Array(capacity);
    lines.set(this.lines.subarray(0, this.count));
    offsets.set(this.offsets.subarray(0, this.count));
    this.lines = lines;
    this.offsets = offsets;
  }

  /** Keeps every other checkpoint (the last one included) and doubles the strides. */
  private thin(): void {
    let j = 0;
    for (let i = this.count % 2 === 0 ? 1 : 0; i < this.count; i += 2, j++) {
      this.lines[j] = this.lines[i]!;
      this.offsets[j] = this.offsets[i]!;
    }
    this.count = j;
    this.lineStride *= 2;
    this.byteStride *= 2;
  }
}

/** The line index of every file the daemon has scanned, in an LRU bounded by bytes. */
export class LineIndex {
  private readonly files = new Map<string, FileIndex>();
  private used = 0;
  private readonly lineStride: number;
  private readonly byteStride: number;
  private readonly budgetBytes: number;
  private readonly maxCheckpoints: number;
  private readonly scanChunkBytes: number;
  private readonly spare: NewlineScanner[] = [];
  private readonly spareWindowBuffers: Buffer[] = [];
  private readonly maxScans: number;
  private activeScans = 0;
  private readonly waitingScans: (() => void)[] = [];
  private readonly portable: boolean;

  constructor(options: LineIndexOptions = {}) {
    this.lineStride = options.lineStride ?? DEFAULT_LINE_STRIDE;
    this.byteStride = options.byteStride ?? DEFAULT_BYTE_STRIDE;
    this.budgetBytes = options.budgetBytes ?? DEFAULT_BUDGET_BYTES;
    this.maxCheckpoints = Math.max(2, options.maxCheckpointsPerFile ?? DEFAULT_MAX_CHECKPOINTS_PER_FILE);
    // Even, so that UTF-16LE reads stay on code units.
    this.scanChunkBytes = Math.max(2, (options.scanChunkBytes ?? SCAN_CHUNK_BYTES) & ~1);
    this.portable = options.portable ?? false;
    this.maxScans = Math.max(1, options.maxConcurrentScans ?? DEFAULT_MAX_CONCURRENT_SCANS);
    if (!(this.lineStride >= 1 && this.byteStride >= 1)) throw new RangeError("line index strides must be ≥ 1");
  }

  /** Bytes the index holds (checkpoint arrays plus a fixed cost per file). */
  get usedBytes(): number {
    return this.used;
  }

  /** Files indexed. */
  get fileCount(): number {
    return this.files.size;
  }

  /**
   * The known line start nearest before or at `line` (1-based) in `file`,
   * scanning forward from the index's frontier first when `line` lies beyond
   * it. Line 1 is { line: 1, offset: 0 }: a reader starting there still has a
   * BOM to skip.
   */
  async seek(file: IndexedFile, encoding: TextEncoding, line: number, signal?: AbortSignal): Promise<Checkpoint> {
    const { index, exact } = await this.reach(file, encoding, line, signal);
    return exact?.line === line ? exact : index.find(line);
  }

  /** The file's line count: scans what is not yet indexed, to the end. */
  async totalLines(file: IndexedFile, encoding: TextEncoding, signal?: AbortSignal): Promise<number> {
    return this.knownTotalLines(file, encoding) ?? (await this.reach(file, encoding, Number.POSITIVE_INFINITY, signal)).index.totalLines!;
  }

  /** The file's line count if a scan or a window has reached its end, without reading. */
  knownTotalLines(file: IndexedFile, encoding: TextEncoding): number | undefined {
    return this.files.get(keyOf(file, encoding))?.totalLines;
  }

  /**
   * Records a line count a window found by reading to the end, once a fresh
   * fstat shows the file still is the version the index knows.
   */
  async recordTotalLines(file: IndexedFile, encoding: TextEncoding, totalLines: number): Promise<void> {
    const index = this.files.get(keyOf(file, encoding));
    if (!index || index.totalLines !== undefined) return;
    if ((await file.currentVersion()) !== index.version) return;
    index.totalLines = totalLines;
  }

  /** Scans (or waits for the scan in flight) until `line` is known or the end is reached. */
  private async reach(file: IndexedFile, encoding: TextEncoding, line: number, signal?: AbortSignal): Promise<{ index: FileIndex; exact?: Checkpoint }> {
    for (;;) {
      signal?.throwIfAborted();
      const index = this.entryFor(file, encoding);
      // A count from a window read to the end is not a reason to stop: the
      // checkpoints are still missing, and a deep window would skip lines from the frontier.
      if (line <= index.frontierLine || index.scannedToEnd) return { index };
      if (index.scanning) {
        // Someone else is scanning this file: share it, then look again. Its
        // failure is its own (an abort, a changed file): we then try ourselves.
        await index.scanning;
        continue;
      }
      const scan = this.extend(index, file, line, signal);
      // Settles either way: a failed scan must not be an unhandled rejection
      // (that would end the daemon) when nobody else waits for it.
      index.scanning = scan.then(
        () => undefined,
        () => undefined,
      );
      try {
        // Even if the entry was evicted meanwhile, what this scan found is right.
        return { index, exact: await scan };
      } finally {
        index.scanning = undefined;
      }
    }
  }

  private entryFor(file: IndexedFile, encoding: TextEncoding): FileIndex {
    const key = keyOf(file, encoding);
    let index = this.files.get(key);
    if (index) {
      // Most recently used last.
      this.files.delete(key);
      this.files.set(key, index);
      return index;
    }
    index = new FileIndex(key, file.entry.version, Number(file.entry.size), encoding, this.lineStride, this.byteStride);
    this.files.set(key, index);
    this.account(index);
    return index;
  }

  /**
   * Scans from the frontier to the start of line `target` or the end of the
   * file as it was opened, recording checkpoints, and on to the end of the
   * chunk in hand (already read, and the next window is likely near). On
   * success (or abort) the frontier moves once the file is seen unchanged.
   * Returns where `target` starts, when the scan got there.
   */
  private async extend(index: FileIndex, file: IndexedFile, target: number, signal?: AbortSignal): Promise<Checkpoint | undefined> {
    const { unit, size } = index;
    const max = this.maxCheckpoints;
    let line = index.frontierLine;
    let start = index.frontierOffset;
    let pos = start;
    // The frontier may be due a checkpoint (an earlier scan stopped right there).
    if (line > index.lastLine && (line - index.lastLine >= index.lineStride || start - index.lastOffset >= index.byteStride)) {
      index.push(line, start, max);
    }
    // Two buffers: the next chunk is read while this one is searched.
    await this.acquireScan();
    let scanner: NewlineScanner;
    try {
      scanner = this.takeScanner();
    } catch (error) {
      this.releaseScan();
      throw error;
    }
    const chunk = this.scanChunkBytes;
    let current: 0 | 1 = 0;
    const readChunk = (at: number, which: 0 | 1): Promise<number> | undefined =>
      at < size ? file.readInto(scanner.buffers[which].subarray(0, Math.min(chunk, size - at)), at) : undefined;
    let pending = readChunk(pos, current);
    // No read ahead on a scan's first chunk: a window near the frontier needs only that one.
    let first = true;
    // `goal`: the line to stop at; once there, `reached`, and the rest of the chunk is indexed too.
    let goal = target;
    let reached: Checkpoint | undefined;
    try {
      while (!reached && line < target && pos < size) {
        if (signal?.aborted) break;
        const length = Math.min(chunk, size - pos);
        const got = await pending;
        if (got !== length) fail("CONTENT_CHANGED", `${displayOf(file)} changed while it was being read`);
        pending = first ? undefined : readChunk(pos + length, (current ^ 1) as 0 | 1);
        const buf = scanner.buffers[current].subarray(0, length);
        if (pos === 0) index.contentStart = bomLength(buf, index.encoding);
        if (unit === 1) {
          // From checkpoint to checkpoint: one SIMD search for the k-th line
          // feed, not a call per line. `p`: where the search goes on in buf.
          for (let p = 0; ; ) {
            const nextLine = Math.min(goal, index.lastLine + index.lineStride);
            const k = nextLine - line;
            const r = scanner.nth(current, p, length, k);
            // The byte stride: the first line start at or after nextOffset, when it comes first.
            const beforeNext = index.lastOffset + index.byteStride - 1 - pos;
            if (beforeNext < length && (r < 0 || r > beforeNext)) {
              const j = buf.indexOf(0x0a, Math.max(p, beforeNext));
              if (j !== -1 && (r < 0 || j < r)) {
                line += scanner.count(current, p, j + 1);
                start = pos + j + 1;
                index.push(line, start, max);
                p = j + 1;
                continue;
              }
            }
            if (r < 0) {
              // Fewer than k: the rest of the chunk holds no checkpoint.
              if (r < -1) {
                line += -1 - r;
                start = pos + buf.lastIndexOf(0x0a) + 1;
              }
              break;
            }
            line = nextLine;
            start = pos + r + 1;
            p = r + 1;
            if (line === goal) {
              reached = { line, offset: start };
              goal = Number.POSITIVE_INFINITY;
              if (line - index.lastLine < index.lineStride) continue;
            }
            index.push(line, start, max);
          }
        } else {
          let nextLine = index.lastLine + index.lineStride;
          let nextOffset = index.lastOffset + index.byteStride;
          for (let i = indexOfNewline(buf, 0, unit); i !== -1; i = indexOfNewline(buf, i + unit, unit)) {
            line++;
            start = pos + i + unit;
            if (line === goal) {
              reached = { line, offset: start };
              goal = Number.POSITIVE_INFINITY;
            }
            if (line >= nextLine || start >= nextOffset) {
              index.push(line, start, max);
              nextLine = line + index.lineStride;
              nextOffset = start + index.byteStride;
            }
          }
        }
        pos += length;
        current = (current ^ 1) as 0 | 1;
        if (first) pending = !reached && line < target ? readChunk(pos, current) : undefined;
        first = false;
      }
      // A read ahead still in flight must land before its buffer is reused or the file is closed.
      await pending?.catch(() => undefined);
      pending = undefined;
      if ((await file.currentVersion()) !== index.version) {
        fail("CONTENT_CHANGED", `${displayOf(file)} changed while it was being indexed`);
      }
    } catch (error) {
      await pending?.catch(() => undefined);
      index.rollback();
      if (error instanceof FileToolsError && error.reason === "CONTENT_CHANGED") this.drop(index);
      throw error;
    } finally {
      this.giveBack(scanner);
      this.releaseScan();
    }
    index.frontierLine = line;
    index.frontierOffset = start;
    if (pos >= size) {
      // The end: the last line start is the frontier; it is a line only if
      // some byte follows it (line 1 starts after a BOM).
      const lineStart = line === 1 ? index.contentStart : start;
      index.totalLines = lineStart < size ? line : line - 1;
      index.scannedToEnd = true;
    }
    this.account(index);
    signal?.throwIfAborted();
    return reached;
  }

  private async acquireScan(): Promise<void> {
    if (this.activeScans < this.maxScans) {
      this.activeScans++;
      return;
    }
    // The slot is handed over by releaseScan.
    await new Promise<void>((resolve) => this.waitingScans.push(resolve));
  }

  private releaseScan(): void {
    const next = this.waitingScans.shift();
    if (next) next();
    else this.activeScans--;
  }

  /** A WINDOW_READ_BYTES buffer for reading a window; give it back when the window is done. */
  takeWindowBuffer(): Buffer {
    return this.spareWindowBuffers.pop() ?? Buffer.allocUnsafeSlow(WINDOW_READ_BYTES);
  }

  giveWindowBuffer(buffer: Buffer): void {
    if (this.spareWindowBuffers.length < SPARE_WINDOW_BUFFERS) this.spareWindowBuffers.push(buffer);
  }

  /** Scans running now (for tests). */
  get scansInFlight(): number {
    return this.activeScans;
  }

  private takeScanner(): NewlineScanner {
    return this.spare.pop() ?? createNewlineScanner(this.scanChunkBytes, this.portable);
  }

  private giveBack(scanner: NewlineScanner): void {
    if (this.spare.length < SPARE_SCANNERS) this.spare.push(scanner);
  }

  private account(index: FileIndex): void {
    if (this.files.get(index.key) !== index) return;
    this.used += index.bytes - index.accounted;
    index.accounted = index.bytes;
    for (const [key, other] of this.files) {
      if (this.used <= this.budgetBytes) break;
      if (other === index) continue;
      this.files.delete(key);
      this.used -= other.accounted;
    }
  }

  private drop(index: FileIndex): void {
    if (this.files.get(index.key) !== index) return;
    this.files.delete(index.key);
    this.used -= index.accounted;
  }
}

function keyOf(file: IndexedFile, encoding: TextEncoding): string {
  return `${file.entry.version}/${encoding}`;
}

function displayOf(file: IndexedFile): string {
  const path = (file.entry as { path?: unknown }).path;
  return typeof path === "string" ? path : "the file";
}
