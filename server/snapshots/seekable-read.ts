// Reads a seekable snapshot (seekable.ts) from its table of contents, its
// files' content fetched by ranged reads of the tarballs that hold them —
// adjacent chunks of one tarball in one read of up to FETCH_BYTES, a few
// reads ahead of the consumer — each chunk inflated on the thread pool,
// bounded by its size, and checked against its SHA-256 before a byte of it
// is used: DATA_LOSS otherwise (a store others can write to may hold
// anything). Three forms:
//   stageTreeFiles — a restore's files, written into its staging directory
//                    (extract.ts has checked the tree first);
//   gzipTar        — a self-contained `.tar.gz` for an export: headers compressed
//                    afresh, content members copied byte for byte (no recompression);
//   fileChunks     — one file's content, for a read at a snapshot.
import { createHash } from "node:crypto";
import { fail, FileToolsError } from "../errors.js";
import { unescapeName } from "../workspace/names.js";
import { displayPath } from "../workspace/paths.js";
import { listedByWalk, walkOrder } from "../workspace/walk.js";
import type { ListedEntry } from "../workspace/fingerprint.js";
import { chunksByFile, type ChunkRef, type Contents } from "./contents.js";
import { recordsOf } from "./file-list.js";
import type { SnapshotStore } from "./store.js";
import { compressMembers, inflateChunks, lstatStaged } from "./gzip-pool.js";
import { END_OF_ARCHIVE, headerRecords, paddingOf, type MemberHeader } from "./tar-headers.js";
import type { FileToStage } from "./extract.js";
import type { Staging } from "../workspace/staging.js";

/** Files whose headers are compressed in one call to the pool. */
const HEADER_GROUP = 256;
/** One ranged read covers adjacent chunks up to this many bytes. */
const FETCH_BYTES = 4 << 20;
/** Chunks closer than this are fetched together (the bytes between are read and dropped). */
const GAP_BYTES = 64 << 10;
/** Ranged reads in flight ahead of the consumer. */
const FETCHES_AHEAD = 2;
/** A restore's: the workers write the files, and a read queued behind each keeps both busy. */
const STAGING_FETCHES_AHEAD = 4;

/** One member of the tree, in tar order; a file with its chunks. */
export interface TreeMember {
  header: MemberHeader;
  /** Workspace path (escaped), for include globs. */
  path: string;
  /** A file's SHA-256 (hex); "" for the others. */
  sha256: string;
  chunks: ChunkRef[];
}

/** A chunk as read: its gzip member, and its content with the tar padding that follows it when it is a file's last; null once a worker wrote it to its file. */
interface ReadChunk {
  compressed: Buffer;
  inflated: Buffer | null;
  /** Bytes of tar padding at the end of `inflated`. */
  padding: number;
}

/** An empty, "." or ".." component, a NUL, or nothing after the root. */
const BAD_COMPONENT = /\/(\.{1,2})?(\/|$)|\0|^\/$/;

/** The tree in tar order: directories (a parent before its children), files, then links (last, as extract creates them). */
export function membersOf(contents: Contents, snapshotId: string): TreeMember[] {
  const name = (path: string): string => {
    // Most paths hold no escape and no bad component: their held name is the path less its "/".
    if (path[0] === "/" && !path.includes("\\") && !BAD_COMPONENT.test(path)) return path.slice(1);
    const parts = path.split("/").slice(1).map(unescapeName);
    if (parts.length === 0 || parts.some((p) => p === null || p === "" || p === "." || p === ".." || p.includes("\0"))) {
      fail("DATA_LOSS", `the table of contents of snapshot ${snapshotId} names an invalid path`);
    }
    return parts.join("/");
  };
  const members: TreeMember[] = [];
  const { directories, files } = contents;
  for (let i = 0; i < directories.paths.length; i++) {
    const path = directories.paths[i]!;
    members.push({ path, sha256: "", chunks: [], header: { name: name(path), type: "directory", mode: directories.modes[i]!, size: 0, mtime: directories.mtimes[i]! } });
  }
  const chunks = chunksByFile(contents);
  let i = 0;
  for (const record of recordsOf(files)) {
    const mtime = contents.mtimes[i]!;
    if (record.type === "file") {
      members.push({ path: record.path, sha256: record.sha256, chunks: chunks[i]!, header: { name: name(record.path), type: "file", mode: record.mode, size: record.size, mtime } });
    } else {
      members.push({ path: record.path, sha256: "", chunks: [], header: { name: name(record.path), type: "symlink", mode: 0o777, size: 0, mtime, linkname: record.target } });
    }
    i++;
  }
  checkNamedOnce(members, snapshotId);
  return members;
}

/** DATA_LOSS for a tree with a name twice, or a name below a file or link: a walk never gives one, and a restore writes its files in parallel. */
function checkNamedOnce(members: readonly TreeMember[], snapshotId: string): void {
  const types = new Map<string, MemberHeader["type"]>();
  for (const { header } of members) {
    if (types.has(header.name)) fail("DATA_LOSS", `the table of contents of snapshot ${snapshotId} names a path twice`);
    types.set(header.name, header.type);
  }
  for (const { header } of members) {
    for (let parent = header.name.slice(0, Math.max(0, header.name.lastIndexOf("/"))); parent !== ""; parent = parent.slice(0, Math.max(0, parent.lastIndexOf("/")))) {
      const type = types.get(parent);
      if (type === "directory") break; // checked itself
      if (type !== undefined) fail("DATA_LOSS", `the table of contents of snapshot ${snapshotId} names a path below a file or link`);
    }
  }
}

/**
 * A restore's staged tree as a walk of it lists it (fingerprint.ts:
 * listStaged), from an lstat of each member on the thread pool rather than
 * a walk on the main thread (20,000 entries: ~0.4 s of a restore's tail).
 * Undefined when its members cannot stand for the tree: a directory that no
 * member names (made on a file's way), a name a walk would skip or read back
 * otherwise, an entry not there.
 */
export async function listStagedMembers(staging: Staging, members: readonly TreeMember[]): Promise<ListedEntry[] | undefined> {
  const directories = new Set(members.filter((m) => m.header.type === "directory").map((m) => m.header.name));
  const entries: string[][] = [];
  for (const { header } of members) {
    const slash = header.name.lastIndexOf("/");
    if (slash >= 0 && !directories.has(header.name.slice(0, slash))) return undefined;
    const name = header.name.slice(slash + 1);
    if (!listedByWalk(name)) return undefined;
    entries.push(header.name.split("/"));
  }
  const stats = await staging.lend((fd) => lstatStaged(fd, entries));
  const listing: ListedEntry[] = [];
  for (let i = 0; i < entries.length; i++) {
    const stated = stats[i];
    if (!stated) return undefined;
    listing.push({ parts: entries[i]!, path: displayPath(entries[i]!), ...stated });
  }
  return listing.sort(walkOrder);
}

/**
 * Writes the files of a restore into `staging`, their names and modes
 * checked (extract.ts). A file of one chunk (the many small ones) is written
 * by the gzip worker that inflates and checks it, several batches at once,
 * in the order of the tarballs' bytes, not the tree's: a chain of
 * incremental snapshots interleaves its tarballs file by file, and read in
 * tree order it would take a ranged read and a worker's task for every few
 * files. Meanwhile empty files, and larger ones in order, are written here as
 * their chunks come (the main thread is idle while the workers write); a
 * failure of either stops the other, and both have stopped when this returns.
 */
export async function stageTreeFiles(store: SnapshotStore, files: readonly FileToStage<TreeMember>[], staging: Staging, signal?: AbortSignal): Promise<void> {
  const whole: PlannedChunk[] = [];
  const larger: FileToStage<TreeMember>[] = [];
  for (const file of files) {
    const { chunks, header } = file.member;
    if (chunks.length === 1) whole.push({ ref: chunks[0]!, padding: paddingOf(header.size), file: { parts: file.parts, mode: file.mode, mtime: header.mtime } });
    else larger.push(file);
  }
  whole.sort((a, b) => (a.ref.tarball < b.ref.tarball ? -1 : a.ref.tarball > b.ref.tarball ? 1 : a.ref.offset - b.ref.offset));
  const stop = new AbortController();
  const stopping = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
  let failure: { error: unknown } | undefined;
  const stopOthers = (error: unknown): void => {
    failure ??= { error };
    stop.abort();
  };
  const writeWhole = async (): Promise<void> => {
    for await (const _ of readPlanned(store, plan(whole), STAGING_FETCHES_AHEAD, stopping, staging)); // written by the workers
  };
  await Promise.all([writeWhole().catch(stopOthers), writeLarger(store, larger, staging, stopping).catch(stopOthers)]);
  if (failure) throw failure.error;
}

/** Empty files and those of several chunks, in order, written here as their chunks come. */
async function writeLarger(store: SnapshotStore, larger: readonly FileToStage<TreeMember>[], staging: Staging, signal: AbortSignal): Promise<void> {
  const chunks = readPlanned(store, plan(plannedChunks(larger.map((f) => f.member))), FETCHES_AHEAD, signal);
  try {
    for (const { member, parts, mode } of larger) {
      signal.throwIfAborted();
      if (member.chunks.length === 0) await staging.writeSmallFile(parts, Buffer.alloc(0), mode, member.header.mtime);
      else await staging.writeFile(parts, fileContent(chunks, member), mode, member.header.mtime);
    }
  } finally {
    await chunks.return(undefined); // a restore that stopped early reads no further ahead
  }
}

/**
 * A file's content, chunk by chunk, each checked against its own SHA-256 as it was read; past the last, the whole
 * against the one its file list gives (which a restore's stat cache keeps), DATA_LOSS when they differ.
 */
async function* fileContent(chunks: AsyncGenerator<ReadChunk>, member: TreeMember): AsyncGenerator<Buffer> {
  const whole = new WholeFileCheck(member);
  for (let c = 0; c < member.chunks.length; c++) {
    const content = contentOf(await next(chunks));
    whole.add(content);
    yield content;
  }
  whole.end();
}

/**
 * A file of several chunks, each checked against its own SHA-256 as it is
 * read, checked whole against the one its file list gives (which a restore's
 * stat cache keeps, a diff compares, a read at the snapshot serves); a file
 * of one chunk needs nothing more: its chunk's SHA-256 is the file list's.
 */
export class WholeFileCheck {
  private readonly hash;

  /** `file`: its workspace path (for the message), its chunks and its SHA-256 (hex). */
  constructor(private readonly file: { path: string; chunks: readonly ChunkRef[]; sha256: string }) {
    this.hash = file.chunks.length > 1 ? createHash("sha256") : undefined;
  }

  add(content: Buffer): void {
    this.hash?.update(content);
  }

  /** DATA_LOSS when the content added is not the file's. */
  end(): void {
    if (this.hash && this.hash.digest("hex") !== this.file.sha256) fail("DATA_LOSS", `the content of ${this.file.path} does not match the SHA-256 its snapshot's file list gives`);
  }
}

/** A chunk's content without the tar padding that follows a file's last. */
function contentOf(chunk: ReadChunk): Buffer {
  if (!chunk.inflated) throw new Error("a chunk written to its file was taken for its content");
  return chunk.inflated.subarray(0, chunk.inflated.length - chunk.padding);
}

/** The tree as one self-contained `.tar.gz`: runs of headers gzipped (in the pool, a group of files at a time), content members copied as stored. */
export async function* gzipTar(store: SnapshotStore, members: readonly TreeMember[], level: number, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
  const chunks = readChunks(store, members, signal);
  for (let start = 0; start < members.length; start += HEADER_GROUP) {
    const group = members.slice(start, start + HEADER_GROUP);
    // Each run of headers ends at a file with content, whose chunks follow it; the last run also ends the archive when the tree does.
    const runs: Buffer[][] = [[]];
    for (const member of group) {
      runs[runs.length - 1]!.push(headerRecords(member.header));
      if (member.chunks.length > 0) runs.push([]);
    }
    if (start + HEADER_GROUP >= members.length) runs[runs.length - 1]!.push(END_OF_ARCHIVE);
    const compressed = (await compressMembers(runs.map((run) => Buffer.concat(run)).filter((run, i) => run.length > 0 || i < runs.length - 1), level)).members;
    let run = 0;
    for (const member of group) {
      if (member.chunks.length === 0) continue;
      yield compressed[run++]!;
      const whole = new WholeFileCheck(member);
      for (let c = 0; c < member.chunks.length; c++) {
        const chunk = await next(chunks);
        whole.add(contentOf(chunk));
        yield chunk.compressed;
      }
      whole.end();
    }
    if (run < compressed.length) yield compressed[run]!;
  }
  if (members.length === 0) yield (await compressMembers([END_OF_ARCHIVE], level)).bytes;
}

async function next(chunks: AsyncGenerator<ReadChunk>): Promise<ReadChunk> {
  const result = await chunks.next();
  if (result.done) throw new Error("fewer chunks read than the table of contents lists");
  return result.value;
}

/** A ranged read planned: which chunks it covers, in order. */
interface Fetch {
  tarball: string;
  offset: number;
  length: number;
  chunks: PlannedChunk[];
}

/** A chunk to read, with the tar padding its gzip member holds after its content (a file's last chunk's); `file`: the whole of that staged file (see stageTreeFiles). */
interface PlannedChunk {
  ref: ChunkRef;
  padding: number;
  file?: { parts: string[]; mode: number; mtime: number };
}

/** Every file's chunks in the order of `members`, read, inflated and checked. */
function readChunks(store: SnapshotStore, members: readonly TreeMember[], signal?: AbortSignal): AsyncGenerator<ReadChunk> {
  return readPlanned(store, plan(plannedChunks(members)), FETCHES_AHEAD, signal);
}

function* plannedChunks(members: readonly TreeMember[]): Generator<PlannedChunk> {
  for (const member of members) {
    for (let c = 0; c < member.chunks.length; c++) {
      yield { ref: member.chunks[c]!, padding: c === member.chunks.length - 1 ? paddingOf(member.header.size) : 0 };
    }
  }
}

/**
 * The content of chunks `from` to `to` (exclusive) of one file of `size`
 * bytes whose chunks are `chunks`, each checked, in order: one content
 * buffer per chunk. With `ahead` > 1 later ranged reads are in flight while
 * the consumer takes the earlier ones; nothing past `to` is ever read.
 */
export async function* fileChunks(
  store: SnapshotStore,
  chunks: readonly ChunkRef[],
  size: number,
  range: { from: number; to: number; ahead: number },
  signal?: AbortSignal,
): AsyncGenerator<Buffer> {
  const planned = chunks.slice(range.from, range.to).map((ref, i) => ({ ref, padding: range.from + i === chunks.length - 1 ? paddingOf(size) : 0 }));
  for await (const chunk of readPlanned(store, plan(planned), range.ahead, signal)) yield contentOf(chunk);
}

/** The planned reads, `ahead` of them in flight, their chunks in order; with `staging`, their files written there (see stageTreeFiles). */
async function* readPlanned(store: SnapshotStore, fetches: readonly Fetch[], ahead: number, signal?: AbortSignal, staging?: Staging): AsyncGenerator<ReadChunk> {
  const inFlight: Array<Promise<ReadChunk[]>> = [];
  let planned = 0;
  const fill = (): void => {
    while (inFlight.length < ahead && planned < fetches.length) {
      const fetched = fetchAndCheck(store, fetches[planned++]!, signal, staging);
      fetched.catch(() => undefined); // awaited in order below
      inFlight.push(fetched);
    }
  };
  try {
    fill();
    while (inFlight.length > 0) {
      const read = await inFlight.shift()!;
      fill();
      yield* read;
    }
  } finally {
    // Stopped early (a failure, a consumer gone): nothing in flight outlives it, a worker's writes least of all.
    await Promise.allSettled(inFlight);
  }
}

/** Groups the chunks, in order, into ranged reads of adjacent bytes. */
function plan(chunks: Iterable<PlannedChunk>): Fetch[] {
  const fetches: Fetch[] = [];
  let current: Fetch | undefined;
  for (const chunk of chunks) {
    const { ref } = chunk;
    const end = ref.offset + ref.length;
    if (current && current.tarball === ref.tarball && ref.offset >= current.offset + current.length && ref.offset - (current.offset + current.length) <= GAP_BYTES && end - current.offset <= FETCH_BYTES) {
      current.length = end - current.offset;
    } else {
      current = { tarball: ref.tarball, offset: ref.offset, length: ref.length, chunks: [] };
      fetches.push(current);
    }
    current.chunks.push(chunk);
  }
  return fetches;
}

async function fetchAndCheck(store: SnapshotStore, fetch: Fetch, signal?: AbortSignal, staging?: Staging): Promise<ReadChunk[]> {
  signal?.throwIfAborted();
  let bytes: Buffer;
  try {
    bytes = await store.getRange(fetch.tarball, fetch.offset, fetch.length, signal);
  } catch (error) {
    if (error instanceof FileToolsError && error.reason === "NOT_FOUND") fail("DATA_LOSS", `tarball ${fetch.tarball} is missing from the store`);
    throw error;
  }
  if (bytes.length < fetch.length) fail("DATA_LOSS", `tarball ${fetch.tarball} is shorter than its table of contents says`);
  const compressed = fetch.chunks.map(({ ref }) => bytes.subarray(ref.offset - fetch.offset, ref.offset - fetch.offset + ref.length));
  const chunks = fetch.chunks.map(({ ref, padding, file }) => ({ offset: ref.offset - fetch.offset, length: ref.length, bytes: ref.size + padding, hashed: ref.size, sha256: ref.sha256, file }));
  // A restore does not need the compressed bytes: their memory moves to the worker.
  const inflate = (stagingFd?: number) => inflateChunks(bytes, chunks, { stagingFd, handOver: staging !== undefined });
  const inflated = await (staging ? staging.lend(inflate) : inflate());
  return fetch.chunks.map(({ ref, padding }, i): ReadChunk => {
    const result = inflated[i];
    const where = `a chunk of tarball ${ref.tarball} at ${ref.offset}`;
    if (!result) throw new Error(`${where} was neither inflated nor refused`);
    if ("problem" in result) {
      if (result.problem === "too-large") fail("DATA_LOSS", `${where} inflates past the ${ref.size + padding} bytes its table of contents gives (a compression bomb?); stopped there`);
      if (result.problem === "mismatch") fail("DATA_LOSS", `${where} does not match its SHA-256`);
      fail("DATA_LOSS", `${where} is not the gzip member its table of contents says`);
    }
    if ("unsafe" in result) fail("UNSAFE_ARCHIVE", result.unsafe);
    if ("failed" in result) throw Object.assign(new Error(result.failed.message), { code: result.failed.code, syscall: result.failed.syscall });
    if ("staged" in result) return { compressed: compressed[i]!, inflated: null, padding };
    return { compressed: compressed[i]!, inflated: Buffer.from(result.content.buffer, result.content.byteOffset, result.content.byteLength), padding };
  });
}
