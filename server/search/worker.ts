// A search pool worker: scans a batch of files that the main thread opened
// through the workspace module (it passes descriptors of this process; the
// worker only reads them, by position, and never opens or closes anything).
import { fstatSync, readSync } from "node:fs";
import { looksBinary, BINARY_HEAD_BYTES } from "../text/binary.js";
import { bomLength } from "../text/encoding.js";
import type { PatternSpec } from "./pattern.js";
import { FileScan, Matcher, type ScanOptions, type ScanResult } from "./scan.js";

export interface SearchTask {
  pattern: PatternSpec;
  options: ScanOptions;
  files: { fd: number }[];
}

export type FileOutcome =
  | ({ kind: "text"; bytes: number } & ScanResult)
  | { kind: "binary"; bytes: number }
  | { kind: "skipped"; bytes: number; reason: string };

export type WorkerTask = SearchTask | { ping: true };

/** Bytes per read; a segment is the whole lines within it. */
const READ_BYTES = 4 << 20;
/** A line longer than this is split (searched in pieces) rather than buffered whole. */
const MAX_BUFFER_BYTES = 64 << 20;
/** UTF-16 files are decoded whole; larger ones are skipped. */
const MAX_UTF16_BYTES = 64 << 20;

let buffer = Buffer.allocUnsafe(READ_BYTES);
let cached: { key: string; matcher: Matcher } | null = null;

export default function run(task: WorkerTask): FileOutcome[] | "pong" {
  if ("ping" in task) return "pong";
  const key = JSON.stringify(task.pattern);
  if (cached?.key !== key) cached = { key, matcher: new Matcher(task.pattern) };
  const matcher = cached.matcher;
  const outcomes: FileOutcome[] = [];
  let limit = task.options.limit;
  for (const file of task.files) {
    let outcome: FileOutcome;
    try {
      outcome = scanFile(file.fd, matcher, { ...task.options, limit });
    } catch (error) {
      outcome = { kind: "skipped", bytes: 0, reason: (error as NodeJS.ErrnoException).code ?? String(error) };
    }
    if (outcome.kind === "text") limit = Math.max(0, limit - outcome.matches.length);
    outcomes.push(outcome);
  }
  return outcomes;
}

function readFully(fd: number, into: Buffer, offset: number, position: number): number {
  let filled = 0;
  while (offset + filled < into.length) {
    const n = readSync(fd, into, offset + filled, into.length - offset - filled, position + filled);
    if (n === 0) break;
    filled += n;
  }
  return filled;
}

export function scanFile(fd: number, matcher: Matcher, options: ScanOptions): FileOutcome {
  const stats = fstatSync(fd);
  if (!stats.isFile()) return { kind: "skipped", bytes: 0, reason: "not a regular file" };
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
      const head = buffer.subarray(0, Math.min(filled, BINARY_HEAD_BYTES));
      if (looksBinary(head, "utf-8")) return { kind: "binary", bytes: position };
      if (bomLength(head, "utf-16le") > 0) return scanUtf16(fd, stats.size, matcher, scan);
    }
    const atEnd = read === 0 || filled < buffer.length;
    if (atEnd) {
      if (filled > 0) scan.feed(matcher.segment(buffer.subarray(0, filled)));
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
  const text = bytes.subarray(2, read - (read % 2)).toString("utf16le");
  scan.feed(matcher.textSegment(text));
  return { kind: "text", bytes: read, ...scan.result };
}
