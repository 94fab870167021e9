// Reads a seekable snapshot (seekable.ts) from its table of contents: the
// tree as a tar stream, its files' content fetched by ranged reads of the
// tarballs that hold them — adjacent chunks of one tarball in one read of up
// to FETCH_BYTES, a few reads ahead of the consumer — each chunk inflated on
// the thread pool, bounded by its size, and checked against its SHA-256
// before a byte of it is used: DATA_LOSS otherwise (a store others can
// write to may hold anything). Two forms:
//   plainTar — what a restore extracts (extract.ts, as for any archive);
//   gzipTar  — a self-contained `.tar.gz` for an export: headers compressed
//              afresh, content members copied byte for byte (no recompression).
import { fail, FileToolsError } from "../errors.js";
import { unescapeName } from "../workspace/names.js";
import { chunksByFile, type ChunkRef, type Contents } from "./contents.js";
import { recordsOf } from "./file-list.js";
import type { SnapshotStore } from "./store.js";
import { compressMembers, inflateMembers } from "./gzip-pool.js";
import { END_OF_ARCHIVE, headerRecords, paddingOf, type MemberHeader } from "./tar-headers.js";
import type { ArchiveMember } from "./extract.js";

/** Files whose headers are compressed in one call to the pool. */
const HEADER_GROUP = 256;
/** One ranged read covers adjacent chunks up to this many bytes. */
const FETCH_BYTES = 4 << 20;
/** Chunks closer than this are fetched together (the bytes between are read and dropped). */
const GAP_BYTES = 64 << 10;
/** Ranged reads in flight ahead of the consumer. */
const FETCHES_AHEAD = 2;

/** One member of the tree, in tar order; a file with its chunks. */
export interface TreeMember {
  header: MemberHeader;
  /** Workspace path (escaped), for include globs. */
  path: string;
  /** A file's SHA-256 (hex); "" for the others. */
  sha256: string;
  chunks: ChunkRef[];
}

/** A chunk as read: its gzip member, and its content with the tar padding that follows it when it is a file's last. */
interface ReadChunk {
  compressed: Buffer;
  inflated: Buffer;
  /** Bytes of tar padding at the end of `inflated`. */
  padding: number;
}

/** The tree in tar order: directories (a parent before its children), files, then links (last, as extract creates them). */
export function membersOf(contents: Contents, snapshotId: string): TreeMember[] {
  const name = (path: string): string => {
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
  return members;
}

/** The tree's members for a restore to stage (extract.ts): no tar between, each file's content read ahead and checked as it is taken. */
export async function* archiveMembers(store: SnapshotStore, members: readonly TreeMember[], signal?: AbortSignal): AsyncGenerator<ArchiveMember> {
  const chunks = readChunks(store, members, signal);
  try {
    for (const { header, chunks: refs } of members) {
      const member = { type: header.type, name: header.name, linkname: header.linkname ?? "", size: header.size, mode: header.mode };
      if (header.type !== "file") yield member;
      else if (refs.length <= 1) yield { ...member, content: refs.length === 0 ? Buffer.alloc(0) : contentOf(await next(chunks)) };
      else yield { ...member, content: fileContent(chunks, refs.length) };
    }
  } finally {
    await chunks.return(undefined); // a restore that stopped early reads no further ahead
  }
}

async function* fileContent(chunks: AsyncGenerator<ReadChunk>, count: number): AsyncGenerator<Buffer> {
  for (let c = 0; c < count; c++) yield contentOf(await next(chunks));
}

/** A chunk's content without the tar padding that follows a file's last. */
function contentOf(chunk: ReadChunk): Buffer {
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
    const compressed = await compressMembers(runs.map((run) => Buffer.concat(run)).filter((run, i) => run.length > 0 || i < runs.length - 1), level);
    let run = 0;
    for (const member of group) {
      if (member.chunks.length === 0) continue;
      yield compressed[run++]!;
      for (let c = 0; c < member.chunks.length; c++) yield (await next(chunks)).compressed;
    }
    if (run < compressed.length) yield compressed[run]!;
  }
  if (members.length === 0) yield (await compressMembers([END_OF_ARCHIVE], level))[0]!;
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

/** A chunk to read, with the tar padding its gzip member holds after its content (a file's last chunk's). */
interface PlannedChunk {
  ref: ChunkRef;
  padding: number;
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

/** The planned reads, `ahead` of them in flight, their chunks in order. */
async function* readPlanned(store: SnapshotStore, fetches: readonly Fetch[], ahead: number, signal?: AbortSignal): AsyncGenerator<ReadChunk> {
  const inFlight: Array<Promise<ReadChunk[]>> = [];
  let planned = 0;
  const fill = (): void => {
    while (inFlight.length < ahead && planned < fetches.length) {
      const fetched = fetchAndCheck(store, fetches[planned++]!, signal);
      fetched.catch(() => undefined); // awaited in order below
      inFlight.push(fetched);
    }
  };
  fill();
  while (inFlight.length > 0) {
    const read = await inFlight.shift()!;
    fill();
    yield* read;
  }
}

/** Groups the chunks, in order, into ranged reads of adjacent bytes. */
function plan(chunks: Iterable<PlannedChunk>): Fetch[] {
  const fetches: Fetch[] = [];
  let current: Fetch | undefined;
  for (const { ref, padding } of chunks) {
    const end = ref.offset + ref.length;
    if (current && current.tarball === ref.tarball && ref.offset >= current.offset + current.length && ref.offset - (current.offset + current.length) <= GAP_BYTES && end - current.offset <= FETCH_BYTES) {
      current.length = end - current.offset;
    } else {
      current = { tarball: ref.tarball, offset: ref.offset, length: ref.length, chunks: [] };
      fetches.push(current);
    }
    current.chunks.push({ ref, padding });
  }
  return fetches;
}

async function fetchAndCheck(store: SnapshotStore, fetch: Fetch, signal?: AbortSignal): Promise<ReadChunk[]> {
  let bytes: Buffer;
  try {
    bytes = await store.getRange(fetch.tarball, fetch.offset, fetch.length, signal);
  } catch (error) {
    if (error instanceof FileToolsError && error.reason === "NOT_FOUND") fail("DATA_LOSS", `tarball ${fetch.tarball} is missing from the store`);
    throw error;
  }
  if (bytes.length < fetch.length) fail("DATA_LOSS", `tarball ${fetch.tarball} is shorter than its table of contents says`);
  const compressed = fetch.chunks.map(({ ref }) => bytes.subarray(ref.offset - fetch.offset, ref.offset - fetch.offset + ref.length));
  const inflated = await inflateMembers(fetch.chunks.map(({ ref, padding }, i) => ({ member: compressed[i]!, bytes: ref.size + padding, hashed: ref.size })));
  return inflated.map((result, i) => {
    const { ref, padding } = fetch.chunks[i]!;
    const where = `a chunk of tarball ${ref.tarball} at ${ref.offset}`;
    if ("problem" in result) {
      if (result.problem === "too-large") fail("DATA_LOSS", `${where} inflates past the ${ref.size + padding} bytes its table of contents gives (a compression bomb?); stopped there`);
      fail("DATA_LOSS", `${where} is not the gzip member its table of contents says`);
    }
    if (result.sha256 !== ref.sha256) fail("DATA_LOSS", `${where} does not match its SHA-256`);
    return { compressed: compressed[i]!, inflated: Buffer.from(result.content.buffer, result.content.byteOffset, result.content.byteLength), padding };
  });
}
