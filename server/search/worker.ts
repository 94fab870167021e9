// A search pool worker: scans a batch of files. A file comes either as a
// descriptor the main thread opened through the workspace module (read by
// position, never closed here), or as a name in a directory the walk holds
// open, which the worker opens through the workspace module's openHeldName,
// checks after its first read (checkHeldRead) and closes when done.
import { closeSync, fstatSync, readSync } from "node:fs";
import { threadId } from "node:worker_threads";
import { checkHeldRead, openHeldName } from "../workspace/held-open.js";
import { isLoneFile } from "../workspace/lone-file.js";
import { hasBinarySignature, looksBinary, BINARY_HEAD_BYTES } from "../text/binary.js";
import { bomLength } from "../text/encoding.js";
import type { PatternSpec } from "./pattern.js";
import { encodeMatches, type EncodedMatches } from "./match-wire.js";
import { FileScan, Matcher, type ScanOptions, type ScanResult } from "./scan.js";

/**
 * The files of a task: one descriptor the main thread opened through the
 * workspace module (read by position, never closed here), or names in
 * directories the walk holds open (`dirFds[i]` holds the i-th of `names`,
 * joined by NUL as `paths` are, for the same reason).
 */
export type TaskFiles = { fd: number } | { dirFds: Int32Array; names: string };

export interface SearchTask {
  pattern: PatternSpec;
  /** `limit`: the search's max_results (content mode: matches; otherwise matching files). */
  options: ScanOptions;
  /** Files larger than this are skipped (0 = no limit). */
  maxFileSize: number;
  files: TaskFiles;
  /**
   * The files as shown (workspace paths), for the encoded matches, joined by
   * NUL (no name holds one): one string clones in one copy, where 512 strings
   * cost the main thread ~1 µs each (6,000 files: 4-9 ms of a 110 ms search).
   */
  paths: string;
  /**
   * Two Int32s: the task's state (UNSTARTED…) and the id of the worker thread that
   * started it. The main thread owns `files` and lets them go only once no
   * worker can touch them any more (see revokeTask).
   */
  lease: SharedArrayBuffer;
  /**
   * The results found by the tasks before this one (in walk order): those
   * done when it was dispatched (`foundBefore`), and the running ones'
   * `progress`, read as they grow. The task needs only what they lack, and
   * one more to prove truncation.
   */
  foundBefore: number;
  running: SharedArrayBuffer[];
  /** One Int32: the results this task has found so far (for the tasks after it). */
  progress: SharedArrayBuffer;
}

export type FileOutcome =
  | ({ kind: "text"; bytes: number } & ScanResult)
  | { kind: "binary"; bytes: number }
  | { kind: "too_large"; bytes: 0 }
  | { kind: "skipped"; bytes: number; reason: string };

/** What each file of a task was, in BatchResult.kinds. */
export const FILE_KINDS: readonly FileOutcome["kind"][] = ["text", "binary", "too_large", "skipped"];
const KIND_CODES = Object.fromEntries(FILE_KINDS.map((kind, code) => [kind, code])) as Record<FileOutcome["kind"], number>;

/** A task's outcome, compact (typed arrays clone as one copy): per file its kind and bytes, and the files with results. */
export interface BatchResult {
  /** Indices into FILE_KINDS. */
  kinds: Uint8Array;
  bytes: Float64Array;
  /** Text files that matched (count > 0, or more), by index in the task, in order. */
  hits: FileHit[];
}

/** A file with results: in content mode its matches, encoded (match-wire.ts); none in the other modes (an empty buffer per file still clones). */
export interface FileHit {
  index: number;
  /** Matching lines found (content: reported ones; files: 1 at most). */
  count: number;
  /** Content mode: another matching line exists beyond the limit. */
  more: boolean;
  matches?: EncodedMatches;
}

export type WorkerTask = SearchTask | { ping: true };

/** States of a task's use of the main thread's descriptors (SearchTask.lease). */
const UNSTARTED = 0;
/** A worker is using them (it may be terminated before it finishes). */
const STARTED = 1;
const FINISHED = 2;
/** Revoked by the main thread before a worker started: it must not start. */
const REVOKED = 3;

/** A new SearchTask.lease. */
export function newLease(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(8));
}

/**
 * For the main thread, once a task failed or was aborted: keeps a worker that
 * has not started it from starting, and returns the id of the worker thread
 * that started it and had not finished (its descriptors may still be in use
 * until that thread has exited), or null when none can touch them.
 */
export function revokeTask(lease: Int32Array): number | null {
  const state = Atomics.compareExchange(lease, 0, UNSTARTED, REVOKED);
  return state === STARTED ? Atomics.load(lease, 1) : null;
}

/** Bytes per read; a segment is the whole lines within it. */
const READ_BYTES = 1 << 20;
/**
 * A line longer than this is searched in pieces of this size (a match across
 * a piece boundary is missed) rather than buffered whole: it bounds a
 * worker's memory.
 */
const MAX_BUFFER_BYTES = 16 << 20;
/** UTF-16 files are decoded whole; larger ones are skipped. */
const MAX_UTF16_BYTES = 64 << 20;

let buffer = Buffer.allocUnsafe(READ_BYTES);
let cached: { key: string; matcher: Matcher } | null = null;

export default function run(task: WorkerTask): BatchResult | "pong" {
  if ("ping" in task) return "pong";
  const key = JSON.stringify(task.pattern);
  if (cached?.key !== key) cached = { key, matcher: new Matcher(task.pattern) };
  const matcher = cached.matcher;
  const names = "fd" in task.files ? [] : task.files.names.split("\0");
  const count = "fd" in task.files ? 1 : names.length;
  const result: BatchResult = { kinds: new Uint8Array(count), bytes: new Float64Array(count), hits: [] };
  const running = task.running.map((buffer) => new Int32Array(buffer));
  const progress = new Int32Array(task.progress);
  const foundBefore = () => running.reduce((n, r) => n + Atomics.load(r, 0), task.foundBefore);
  const limit = task.options.limit;
  let results = 0;
  let index = 0;
  let paths: string[] | undefined; // split at the first hit
  const lease = new Int32Array(task.lease);
  // Before any of the task's files is opened (checkHeldRead).
  const startedMs = Date.now();
  Atomics.store(lease, 1, threadId);
  if (Atomics.compareExchange(lease, 0, UNSTARTED, STARTED) === UNSTARTED) {
    try {
      // Results beyond `allowed` are not needed, but for one that proves truncation.
      for (let allowed = limit - foundBefore(); index < count && results <= allowed; index++, allowed = limit - foundBefore()) {
        const outcome = scanOne(task, index, matcher, { ...task.options, limit: Math.max(0, allowed - results) }, names[index] ?? "", startedMs);
        result.kinds[index] = KIND_CODES[outcome.kind];
        result.bytes[index] = outcome.bytes;
        if (outcome.kind === "text" && (outcome.count > 0 || outcome.more)) {
          const hit: FileHit = { index, count: outcome.count, more: outcome.more };
          if (task.options.mode === "content") hit.matches = encodeMatches((paths ??= task.paths.split("\0"))[index]!, outcome.matches);
          result.hits.push(hit);
          results += task.options.mode === "content" ? outcome.matches.length + (outcome.more ? 1 : 0) : 1;
          Atomics.store(progress, 0, results);
        }
      }
    } finally {
      Atomics.store(lease, 0, FINISHED);
    }
  }
  result.kinds.fill(KIND_CODES.skipped, index);
  return result;
}

/** `name`: the file's in its held directory (none for a descriptor); `startedMs`: a time (ms since the epoch) before it is opened. */
function scanOne(task: SearchTask, index: number, matcher: Matcher, options: ScanOptions, name: string, startedMs: number): FileOutcome {
  const { files } = task;
  if ("fd" in files) return guarded(() => scanFile(files.fd, matcher, options));
  const dirFd = files.dirFds[index]!;
  const fd = openHeldName(dirFd, name);
  if (typeof fd !== "number") return { kind: "skipped", bytes: 0, reason: fd.skipped };
  try {
    return guarded(() => scanFile(fd, matcher, options, () => checkHeldRead(fd, dirFd, name, startedMs), task.maxFileSize));
  } finally {
    // Terminated mid-file, the worker leaves it to Node, which closes it when the thread exits (trackUnmanagedFds).
    closeSync(fd);
  }
}

/** A read error skips the file. */
function guarded(scan: () => FileOutcome): FileOutcome {
  try {
    return scan();
  } catch (error) {
    return { kind: "skipped", bytes: 0, reason: (error as NodeJS.ErrnoException).code ?? String(error) };
  } finally {
    if (buffer.length > READ_BYTES) buffer = Buffer.allocUnsafe(READ_BYTES); // give a long line's memory back
  }
}

function readFully(fd: number, into: Buffer, offset: number, position: number): number {
  let filled = 0;
  while (offset + filled < into.length) {
    const want = into.length - offset - filled;
    const n = readSync(fd, into, offset + filled, want, position + filled);
    filled += n;
    if (n < want) break; // a regular file reads short only at its end
  }
  return filled;
}

/** A file's check after its first read (the one-link rule, lone-file.ts): its size when its bytes may be used, or why not. */
type FirstReadCheck = () => { size: number } | { skipped: string };

/** The check of a descriptor the main thread opened (and checked against the name at open, Workspace.openFile). */
const loneFile = (fd: number): FirstReadCheck => () => (isLoneFile(fd) ? { size: fstatSync(fd).size } : { skipped: "not a lone regular file" });

/**
 * Scans the file `fd`. Its bytes count only once `check` has passed after the
 * first read (most files take one read: one fstat per file), and each later
 * read is followed by the link count again. Larger than `maxFileSize`
 * (0 = no limit): too_large.
 */
export function scanFile(fd: number, matcher: Matcher, options: ScanOptions, check: FirstReadCheck = loneFile(fd), maxFileSize = 0): FileOutcome {
  let position = 0;
  let carry = 0; // bytes of an unfinished line at the start of the buffer
  const scan = new FileScan(options);
  let first = true;
  for (;;) {
    if (carry === buffer.length) {
      if (buffer.length < MAX_BUFFER_BYTES) {
        const bigger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(bigger, 0, 0, carry);
        buffer = bigger;
      } else {
        // A line of 64 MiB without LF: search what we hold as if it ended here.
        scan.feed(matcher.segment(buffer.subarray(0, carry)));
        carry = 0;
      }
    }
    const read = readFully(fd, buffer, carry, position);
    position += read;
    const filled = carry + read;
    if (first) {
      first = false;
      const checked = check();
      if ("skipped" in checked) return { kind: "skipped", bytes: 0, reason: checked.skipped };
      const { size } = checked;
      if (maxFileSize > 0 && size > maxFileSize) return { kind: "too_large", bytes: 0 };
      const head = buffer.subarray(0, Math.min(filled, BINARY_HEAD_BYTES));
      if (isBinary(head)) return { kind: "binary", bytes: position };
      if (bomLength(head, "utf-16le") > 0) return scanUtf16(fd, size, matcher, scan);
    } else if (!isLoneFile(fd)) {
      return { kind: "skipped", bytes: 0, reason: "hard-linked" };
    }
    const atEnd = read === 0 || filled < buffer.length;
    if (atEnd) {
      if (filled > 0) scan.feed(matcher.segment(buffer.subarray(0, filled)), true);
      return { kind: "text", bytes: position, ...scan.result };
    }
    const lastLf = buffer.lastIndexOf(0x0a, filled - 1);
    if (lastLf < 0) {
      carry = filled;
      continue;
    }
    scan.feed(matcher.segment(buffer.subarray(0, lastLf + 1)));
    if (scan.done) return { kind: "text", bytes: position, ...scan.result };
    carry = filled - lastLf - 1;
    buffer.copy(buffer, 0, lastLf + 1, filled);
  }
}

function scanUtf16(fd: number, size: number, matcher: Matcher, scan: FileScan): FileOutcome {
  if (size > MAX_UTF16_BYTES) return { kind: "skipped", bytes: 0, reason: "UTF-16 file over 64 MiB" };
  const bytes = Buffer.allocUnsafe(size);
  const read = readFully(fd, bytes, 0, 0);
  if (!isLoneFile(fd)) return { kind: "skipped", bytes: 0, reason: "hard-linked" };
  const text = bytes.subarray(2, read - (read % 2)).toString("utf16le");
  scan.feed(matcher.textSegment(text), true);
  return { kind: "text", bytes: read, ...scan.result };
}

/** C0 controls other than \t \n \v \f \r and ESC (as looksBinary counts them). */
const CONTROL = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) CONTROL[c] = (c >= 0x09 && c <= 0x0d) || c === 0x1b ? 0 : 1;
const CONTROL_BYTES = [...CONTROL.keys()].filter((c) => CONTROL[c] === 1);

/**
 * looksBinary(head, "utf-8"), faster for the common case: it runs once per
 * file of a tree. A text head usually holds no counted control at all, which
 * indexOf (memchr) establishes 4x faster than a byte loop; only a head that
 * holds one has its controls counted.
 */
function isBinary(head: Buffer): boolean {
  if (head.length === 0) return false;
  if (head[0] === 0xff && head[1] === 0xfe) return looksBinary(head, "utf-8"); // UTF-16LE: its NULs are text
  if (head.indexOf(0) >= 0) return true;
  if (!CONTROL_BYTES.some((c) => head.indexOf(c) >= 0)) return hasBinarySignature(head);
  let controls = 0;
  for (let i = 0; i < head.length; i++) controls += CONTROL[head[i]!]!;
  if (controls / head.length > 0.1) return true;
  return hasBinarySignature(head);
}
