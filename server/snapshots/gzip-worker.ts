// A thread of the gzip pool (gzip-pool.ts): compresses, or inflates and
// checks, batches of gzip members, off the daemon's main thread. Small
// members are the norm (a source tree's files), where a zlib call's set-up
// costs more than its bytes: a batch pays for one message, and the threads
// run batches in parallel. A restore's files of one member are written
// here too, into its staging directory (workspace/staging.ts), so that
// creating thousands of files is not the main thread's work alone, and its
// staged entries lstat'ed for its listing.
import { hash } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import { move, transferableSymbol, valueSymbol } from "piscina";
import { FileToolsError } from "../errors.js";
import { errnoOf } from "../workspace/errno.js";
import { StagingWriter } from "../workspace/staging.js";
import type { StatedEntry } from "../workspace/entry.js";

/**
 * A chunk of a fetched range to inflate: bytes `offset` to `offset + length`
 * of the range, a gzip member that must inflate to exactly `bytes`, of which
 * the first `hashed` must have the SHA-256 (hex) `sha256`. With `file`, it
 * is the whole content of that file of the staging directory, written there
 * once checked (its components checked by extract.ts, its permission bits,
 * its mtime in seconds).
 */
export interface ChunkToInflate {
  offset: number;
  length: number;
  bytes: number;
  hashed: number;
  sha256: string;
  file?: { parts: string[]; mode: number; mtime: number };
}

export interface InflateTask {
  range: Uint8Array;
  chunks: ChunkToInflate[];
  /** The staging directory's descriptor, lent for this task (Staging.lend): required when a chunk has a `file`. */
  stagingFd?: number;
}

/** Entries of a restore's staging directory (its descriptor lent, as for an inflate) to lstat: its listing (seekable-read.ts). */
export interface LstatTask {
  stagingFd: number;
  entries: string[][];
}

/**
 * Members to compress, back to back in one buffer (moved here, not copied):
 * a batch is one message each way however many members it holds.
 */
export interface CompressTask {
  raw: Uint8Array;
  lengths: number[];
  level: number;
}

/** A batch's gzip members, back to back in one buffer (moved back), and each one's length. */
export interface CompressedMembers {
  bytes: Uint8Array;
  lengths: number[];
}

export type GzipTask = { compress: CompressTask } | { inflate: InflateTask } | { lstat: LstatTask };

/**
 * A chunk inflated and checked: its content, or `staged` once written to its
 * file; else why not, as data (errors do not cross threads whole): the
 * member, a refusal of the staging rules, or the file system's error. A
 * task stops at its first failure: nothing after it is written.
 */
export type Inflated =
  | { content: Uint8Array }
  | { staged: true }
  | { problem: "too-large" | "damaged" | "short" | "mismatch" }
  | { unsafe: string }
  | { failed: { message: string; code?: string; syscall?: string } };

function compressed({ raw, lengths, level }: CompressTask): CompressedMembers {
  let offset = 0;
  const members = lengths.map((length) => gzipSync(raw.subarray(offset, (offset += length)), { level }));
  // A buffer of its own (never a slice of Node's pool), so that moving it moves nothing else.
  const bytes = Buffer.allocUnsafeSlow(members.reduce((sum, member) => sum + member.length, 0));
  let at = 0;
  for (const member of members) at += member.copy(bytes, at);
  const result: CompressedMembers = { bytes, lengths: members.map((member) => member.length) };
  return move({ [transferableSymbol]: bytes.buffer, [valueSymbol]: result }) as unknown as CompressedMembers;
}

/**
 * V8's collector, when the process runs with --expose-gc (bin/filetoolsd
 * does; tests under vitest do not, and skip it). A task's buffers live
 * outside this thread's small heap (its members, raw and compressed, or a
 * range and the files inflated from it), and V8 frees such memory only once
 * ~64 MiB of it is dead or the heap fills: each thread held up to that. A
 * minor collection after each task (the young generation is 4 MiB: well
 * under a millisecond) frees them at once.
 */
function collectYoung(): void {
  (globalThis as { gc?: (options: { type: "minor" }) => void }).gc?.({ type: "minor" });
}

export default function run(task: GzipTask): CompressedMembers | Inflated[] | (StatedEntry | null)[] {
  try {
    return runTask(task);
  } finally {
    collectYoung();
  }
}

function runTask(task: GzipTask): CompressedMembers | Inflated[] | (StatedEntry | null)[] {
  if ("compress" in task) return compressed(task.compress);
  if ("lstat" in task) return new StagingWriter({ fd: task.lstat.stagingFd }).lstatEach(task.lstat.entries);
  const { range, chunks, stagingFd } = task.inflate;
  const writer = stagingFd === undefined ? undefined : new StagingWriter({ fd: stagingFd });
  const results: Inflated[] = [];
  try {
    for (const chunk of chunks) {
      const result = inflated(range.subarray(chunk.offset, chunk.offset + chunk.length), chunk);
      results.push(result);
      if (!("content" in result)) break;
      if (!chunk.file) continue;
      const written = staged(writer!, chunk.file, result.content.subarray(0, chunk.hashed));
      results[results.length - 1] = written;
      if (!("staged" in written)) break;
    }
  } finally {
    writer?.close();
  }
  return results;
}

/** The member inflated to its size and checked against its SHA-256. */
function inflated(member: Uint8Array, { bytes, hashed, sha256 }: ChunkToInflate): Inflated {
  let content: Buffer;
  try {
    // Past its size it is stopped there: a bomb costs one bound, not its size. Inflated into one buffer of that
    // size (a byte more, to see the end): zlib's 16 KiB pieces joined cost a copy (a 100 KB file: 15-25 % more).
    // With `info`, what zlib took of the input: bytes after the member (which gunzip skips when they are zeros) are
    // refused, for an export copies the stored range as it is, and a reader would stop at them.
    const inflatedMember = gunzipSync(member, { maxOutputLength: Math.max(1, bytes), chunkSize: Math.max(64, bytes + 1), info: true }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
    if (inflatedMember.engine.bytesWritten !== member.length) return { problem: "damaged" };
    content = inflatedMember.buffer;
  } catch (error) {
    return { problem: (error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE" ? "too-large" : "damaged" };
  }
  if (content.length !== bytes) return { problem: "short" };
  if (hash("sha256", content.subarray(0, hashed), "hex") !== sha256) return { problem: "mismatch" };
  return { content };
}

function staged(writer: StagingWriter, file: { parts: string[]; mode: number; mtime: number }, content: Uint8Array): Inflated {
  try {
    writer.writeFile(file.parts, content, file.mode, file.mtime);
    return { staged: true };
  } catch (error) {
    if (error instanceof FileToolsError && error.reason === "UNSAFE_ARCHIVE") return { unsafe: error.message };
    return { failed: { message: (error as Error)?.message ?? String(error), code: errnoOf(error), syscall: (error as NodeJS.ErrnoException)?.syscall } };
  }
}
