// Worker threads that compress and inflate the seekable format's gzip
// members (gzip-worker.ts) in batches: Node's zlib calls each build a stream
// whose set-up, on the main thread, cost more than compressing a small file
// (a 5,000-file tree: 1.75 s of 4.6 s in zlib's processChunk). One pool per
// process, its threads started as work comes (all at once, ahead of it, when
// a restore warms the pool: warmGzipPool) and kept (a daemon's descriptor
// count stays flat once it has written a snapshot), ended with the process.
import { Piscina } from "piscina";
import { defaultWorkerCount } from "../search/pool.js";
import type { StatedEntry } from "../workspace/entry.js";
import type { ChunkToInflate, CompressedMembers, GzipTask, Inflated } from "./gzip-worker.js";

type GzipResult = CompressedMembers | Inflated[] | (StatedEntry | null)[];

const NEVER_IDLE_MS = 2 ** 31 - 1;
/** Entries lstat'ed in one task: a few tasks per thread, so that both threads finish together. */
const LSTAT_SLICE = 2048;
/** A thread's young generation: what it allocates is one batch's buffers, dead once sent (as the search pool's, pool.ts). */
const WORKER_YOUNG_GENERATION_MB = 4;
let pool: Piscina<GzipTask, GzipResult> | undefined;

/** The pool, made on first use with `minThreads` threads started at once. */
function started(minThreads = 0): Piscina<GzipTask, GzipResult> {
  if (pool) return pool;
  // Recipe of shared/notes/stack.md section 5: .ts under tsx/vitest, .js once compiled.
  const isTs = import.meta.url.endsWith(".ts");
  const filename = new URL(isTs ? "./gzip-worker.ts" : "./gzip-worker.js", import.meta.url).href;
  const execArgv = isTs && !process.execArgv.some((a) => a.includes("tsx")) ? [...process.execArgv, "--import", "tsx"] : undefined;
  pool = new Piscina<GzipTask, GzipResult>({
    filename,
    execArgv,
    minThreads,
    maxThreads: defaultWorkerCount(),
    idleTimeout: NEVER_IDLE_MS,
    resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
  });
  // A worker that fails fails its task (its caller hears of it); an 'error' event nobody listened to would end the daemon.
  pool.on("error", () => undefined);
  return pool;
}

/**
 * Makes the pool now, its threads started, if it was not made yet: a
 * restore's first inflate then finds them ready (a thread takes ~100 ms to
 * start). A daemon that never restores starts only the threads its work needs.
 */
export function warmGzipPool(): void {
  started(defaultWorkerCount());
}

/** A batch's gzip members: back to back in `bytes`, each viewed in `members`. */
export interface GzippedBatch {
  bytes: Buffer;
  members: Buffer[];
}

/**
 * Each buffer as a gzip member of its own: `bytes` holds them back to back
 * (a batch is written with one call), `members` views each. The buffers go
 * to the thread copied into one, moved (a batch of 512 small files cloned
 * one by one cost more than the copy), and come back moved.
 */
export async function compressMembers(raw: readonly Uint8Array[], level: number): Promise<GzippedBatch> {
  const joined = Buffer.allocUnsafeSlow(raw.reduce((sum, member) => sum + member.length, 0));
  let at = 0;
  for (const member of raw) {
    joined.set(member, at);
    at += member.length;
  }
  const task: GzipTask = { compress: { raw: joined, lengths: raw.map((member) => member.length), level } };
  const { bytes, lengths } = (await started().run(task, { transferList: [joined.buffer as ArrayBuffer] })) as CompressedMembers;
  const whole = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 0;
  return { bytes: whole, members: lengths.map((length) => whole.subarray(offset, (offset += length))) };
}

/**
 * The chunks of a fetched range inflated and checked, those with a file
 * written into the staging directory whose descriptor is `stagingFd` (see
 * gzip-worker.ts). With `handOver`, the range's memory moves to the worker
 * when the range has it to itself (no copy): the caller no longer reads it.
 */
export async function inflateChunks(range: Buffer, chunks: ChunkToInflate[], options: { stagingFd?: number; handOver?: boolean } = {}): Promise<Inflated[]> {
  const ownsMemory = range.byteOffset === 0 && range.byteLength === range.buffer.byteLength;
  const transferList = options.handOver && ownsMemory ? [range.buffer as ArrayBuffer] : undefined;
  return (await started().run({ inflate: { range, chunks, stagingFd: options.stagingFd } }, { transferList })) as Inflated[];
}

/**
 * Each of `entries` (components below the staging directory whose
 * descriptor is `stagingFd`) as an lstat gives it, null where there is none:
 * in slices across the threads, for a restore's listing of its staged tree.
 */
export async function lstatStaged(stagingFd: number, entries: string[][]): Promise<(StatedEntry | null)[]> {
  const slices: string[][][] = [];
  for (let i = 0; i < entries.length; i += LSTAT_SLICE) slices.push(entries.slice(i, i + LSTAT_SLICE));
  // Every slice settled before this does, failed or not: the descriptor is lent only until then (Staging.lend).
  const results = await Promise.allSettled(slices.map((slice) => started().run({ lstat: { stagingFd, entries: slice } }) as Promise<(StatedEntry | null)[]>));
  const failed = results.find((result) => result.status === "rejected");
  if (failed) throw failed.reason;
  return results.flatMap((result) => (result as PromiseFulfilledResult<(StatedEntry | null)[]>).value);
}
