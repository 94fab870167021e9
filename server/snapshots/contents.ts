// A snapshot's table of contents (the seekable format, seekable.ts): the
// whole tree — directories, files, links — and for each file where its bytes
// are: chunks of at most CHUNK_BYTES, each a gzip member at an offset of one
// of the workspace's tarballs. Stored as `<workspace>/<id>.contents.json.gz`
// beside the manifest, which carries its size and sha256; ListSnapshots never
// reads it. A run's snapshot usually stores a delta of it instead
// (contents-delta.ts). Read back from a store others can write to, so
// checkContents checks everything a reader then relies on: DATA_LOSS for a chunk past its
// tarball, chunks that overlap, sizes that do not add up, a tarball of
// another workspace. Each chunk's bytes are checked against its sha256 when
// read (seekable-read.ts).
import { gzip as gzipCallback } from "node:zlib";
import { promisify } from "node:util";
import { z } from "zod";
import type { ContentsDelta } from "./contents-delta.js";
import { MAX_CONTENT_BYTES, MAX_ENTRIES } from "../workspace/limits.js";
import { FileListSchema, type FileList } from "./file-list.js";
import { tarballId } from "./manifest.js";

/** A large file is cut into gzip members of this many content bytes: a read of a few bytes inflates at most one. */
export const CHUNK_BYTES = 4 << 20;
const DIGEST_BYTES = 32;
/** A stored table of contents inflates to at most this (100,000 files take ~15 MB). */
export const MAX_CONTENTS_BYTES = 1 << 30;
const gzip = promisify(gzipCallback);

const ints = z.array(z.int().nonnegative());
/** Seconds since the epoch: before 1970 too. */
const times = z.array(z.int());

export const ContentsSchema = z.object({
  format: z.literal(1),
  workspace: z.string(),
  snapshot: z.string(),
  /** The tarballs its chunks are in, with their sizes. */
  tarballs: z.array(z.object({ key: z.string(), bytes: z.int().nonnegative() })),
  /** Regular files and links, as in a manifest's file list (file-list.ts). */
  files: FileListSchema,
  /** Each file's mtime, then each link's (seconds), for the headers of an export. */
  mtimes: times,
  /** Directories in walk order (a parent before its children): workspace paths, modes, mtimes. */
  directories: z.object({ paths: z.array(z.string()), modes: z.array(z.int().min(0).max(0o777)), mtimes: times }),
  /** Chunks: file i's are first[i] up to first[i+1] (the last file's up to the end). */
  chunks: z.object({
    first: ints,
    tarball: ints,
    offset: ints,
    /** Compressed bytes (the gzip member). */
    length: ints,
    /** Content bytes (the last chunk's member also holds the tar padding after them). */
    size: ints,
    /**
     * The content SHA-256 of each chunk of a file cut into several, raw and
     * concatenated, base64 (a file of one chunk: its file list's SHA-256).
     */
    sha256: z.base64(),
  }),
});

export type Contents = z.infer<typeof ContentsSchema>;

/** Where one chunk is. */
export interface ChunkRef {
  tarball: string;
  offset: number;
  length: number;
  size: number;
  /** Hex. */
  sha256: string;
}

/** A file's content: its chunks in order, and whether the last one carries the tar padding. */
export type ContentRef = ChunkRef[];

/** A table of contents (whole, or told against another: contents-delta.ts) gzipped, for the store. */
export async function encodeContents(table: Contents | ContentsDelta): Promise<Buffer> {
  return gzip(Buffer.from(JSON.stringify(table)));
}

/**
 * The most a gzip member of `size` content bytes and the tar padding after
 * them can take: deflate's bound (zlib's deflateBound: stored blocks at worst)
 * with gzip's header and trailer, and room to spare. A longer one is refused
 * before a byte of it is read.
 */
function largestMember(size: number): number {
  return size + 512 + (size >> 8) + 1024;
}

/** What is wrong with a table of contents, or undefined. */
export function checkContents(contents: Contents): string | undefined {
  const { files, chunks, tarballs, directories } = contents;
  const fileCount = files.paths.length;
  const chunkCount = chunks.tarball.length;
  if (fileCount + files.links.paths.length + directories.paths.length > MAX_ENTRIES) return `more than ${MAX_ENTRIES} entries`;
  if (contents.mtimes.length !== fileCount + files.links.paths.length) return "mtimes and entries differ in number";
  if (directories.modes.length !== directories.paths.length || directories.mtimes.length !== directories.paths.length) return "directory arrays differ in length";
  if (chunks.first.length !== fileCount) return "chunk starts and files differ in number";
  if (![chunks.offset, chunks.length, chunks.size].every((a) => a.length === chunkCount)) return "chunk arrays differ in length";
  if (!tarballs.every((t) => tarballId(contents.workspace, t.key) !== undefined)) return "a tarball of another workspace, or not a snapshot's tarball";
  if (new Set(tarballs.map((t) => t.key)).size !== tarballs.length) return "a tarball listed twice";
  let total = 0;
  let cutInto = 0;
  for (let i = 0; i < fileCount; i++) {
    const start = chunks.first[i]!;
    const end = i + 1 < fileCount ? chunks.first[i + 1]! : chunkCount;
    if (start > end || end > chunkCount || (i === 0 && start !== 0)) return "chunk starts out of order";
    if (end - start > 1) cutInto += end - start;
    let size = 0;
    for (let c = start; c < end; c++) {
      if (chunks.size[c]! === 0 || chunks.size[c]! > CHUNK_BYTES) return "a chunk's size is out of bounds";
      size += chunks.size[c]!;
    }
    if (size !== files.sizes[i]) return `the chunks of ${files.paths[i]!.slice(0, 100)} do not add up to its size`;
    total += size;
    if (total > MAX_CONTENT_BYTES) return `more than ${MAX_CONTENT_BYTES} bytes of files`;
  }
  if (Buffer.byteLength(chunks.sha256, "base64") !== cutInto * DIGEST_BYTES) return "chunk digests and chunks differ in number";
  // Every chunk inside its tarball; two chunks at one offset are the same chunk (shared content), else apart.
  const placed = new Map<number, Array<[number, number]>>();
  for (let c = 0; c < chunkCount; c++) {
    const tarball = tarballs[chunks.tarball[c]!];
    if (!tarball) return "a chunk in a tarball it does not list";
    if (chunks.length[c]! === 0 || chunks.offset[c]! + chunks.length[c]! > tarball.bytes) return "a chunk past the end of its tarball";
    if (chunks.length[c]! > largestMember(chunks.size[c]!)) return "a chunk longer than its content could compress to";
    let list = placed.get(chunks.tarball[c]!);
    if (!list) placed.set(chunks.tarball[c]!, (list = []));
    list.push([chunks.offset[c]!, chunks.length[c]!]);
  }
  for (const list of placed.values()) {
    list.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < list.length; i++) {
      const [offset, length] = list[i]!;
      const [previousOffset, previousLength] = list[i - 1]!;
      if (offset === previousOffset ? length !== previousLength : offset < previousOffset + previousLength) return "chunks overlap";
    }
  }
  return undefined;
}

/** Every file's chunks, by its index in the file list. */
export function chunksByFile(contents: Contents): ContentRef[] {
  const view = viewOf(contents);
  return Array.from({ length: view.fileCount }, (_, i) => view.chunks(i));
}

/** Content a later snapshot may point at instead of storing it again, by SHA-256 (hex). */
export interface ContentIndex {
  has(sha256: string): boolean;
  get(sha256: string): ContentRef | undefined;
}

/** Every file's content by its SHA-256: the first file that has it, its chunks made only when asked (a run points at few). */
export function contentIndex(contents: Contents): ContentIndex {
  const view = viewOf(contents);
  const first = new Map<string, number>();
  for (let i = 0; i < view.fileCount; i++) {
    const sha256 = view.fileSha256(i);
    if (!first.has(sha256)) first.set(sha256, i);
  }
  return {
    has: (sha256) => first.has(sha256),
    get: (sha256) => {
      const i = first.get(sha256);
      return i === undefined ? undefined : view.chunks(i);
    },
  };
}

const views = new WeakMap<Contents, TableView>();

/**
 * A table's view, made once per table: a run's snapshot views its base (for
 * the content it holds and for the delta) and its own table (for the delta,
 * and as the next run's base). Tables are not changed once built or parsed.
 */
export function viewOf(contents: Contents): TableView {
  let view = views.get(contents);
  if (!view) views.set(contents, (view = new TableView(contents)));
  return view;
}

/** Builds a table of contents while a snapshot is written. */
export class ContentsBuilder {
  private readonly tarballs: Array<{ key: string; bytes: number }> = [];
  private readonly tarballIndex = new Map<string, number>();
  private readonly first: number[] = [];
  private readonly chunkTarball: number[] = [];
  private readonly offset: number[] = [];
  private readonly length: number[] = [];
  private readonly size: number[] = [];
  /** Per chunk slot, its own SHA-256 when its file is cut into several (only those are in the table: a file of one chunk has its file list's). */
  private readonly digests: Array<Buffer | undefined> = [];
  private readonly fileMtimes: number[] = [];
  private readonly linkMtimes: number[] = [];
  private readonly directories = { paths: [] as string[], modes: [] as number[], mtimes: [] as number[] };

  /** A tarball chunks may be in, with its size (the snapshot's own one's is known at the end: see setBytes). */
  useTarball(key: string, bytes: number): void {
    if (this.tarballIndex.has(key)) return;
    this.tarballIndex.set(key, this.tarballs.length);
    this.tarballs.push({ key, bytes });
  }

  setBytes(key: string, bytes: number): void {
    this.tarballs[this.tarballIndex.get(key)!]!.bytes = bytes;
  }

  addDirectory(path: string, mode: number, mtime: number): void {
    this.directories.paths.push(path);
    this.directories.modes.push(mode);
    this.directories.mtimes.push(mtime);
  }

  addLink(mtime: number): void {
    this.linkMtimes.push(mtime);
  }

  /**
   * The next file's content, in the order the file list gets its files. Its
   * chunks' offsets and lengths may be filled in later (a chunk still being
   * compressed): the returned slots are indices for setChunk.
   */
  addFile(mtime: number, chunks: ReadonlyArray<Omit<ChunkRef, "sha256"> & { sha256: Buffer | string }>): number[] {
    this.fileMtimes.push(mtime);
    this.first.push(this.size.length);
    return chunks.map((chunk) => {
      this.useTarball(chunk.tarball, 0);
      this.chunkTarball.push(this.tarballIndex.get(chunk.tarball)!);
      this.offset.push(chunk.offset);
      this.length.push(chunk.length);
      this.size.push(chunk.size);
      this.digests.push(chunks.length === 1 ? undefined : typeof chunk.sha256 === "string" ? Buffer.from(chunk.sha256, "hex") : chunk.sha256);
      return this.size.length - 1;
    });
  }

  /** Where chunk `slot` went (and its own SHA-256, for a file of several chunks). */
  setChunk(slot: number, offset: number, length: number, sha256?: Buffer): void {
    this.offset[slot] = offset;
    this.length[slot] = length;
    if (sha256) this.digests[slot] = sha256;
  }

  build(workspace: string, snapshot: string, files: FileList): Contents {
    // Only the tarballs some chunk is in (the snapshot's own may hold no file).
    const used = [...new Set(this.chunkTarball)].sort((a, b) => a - b);
    const renumber = new Map(used.map((old, i) => [old, i]));
    return {
      format: 1,
      workspace,
      snapshot,
      tarballs: used.map((i) => this.tarballs[i]!),
      files,
      mtimes: [...this.fileMtimes, ...this.linkMtimes],
      directories: this.directories,
      chunks: {
        first: this.first,
        tarball: this.chunkTarball.map((i) => renumber.get(i)!),
        offset: this.offset,
        length: this.length,
        size: this.size,
        sha256: Buffer.concat(this.digests.filter((digest) => digest !== undefined)).toString("base64"),
      },
    };
  }
}

/** A table as entries, one object each (the columnar form is for storage). */
export interface TableEntries {
  files: Array<{ path: string; size: number; mode: number; sha256: string; mtime: number; chunks: ContentRef }>;
  links: Array<{ path: string; target: string; mtime: number }>;
  directories: Array<{ path: string; mode: number; mtime: number }>;
}

/** A table's entries by index, read from its columns when asked (none made into an object ahead). */
export class TableView {
  readonly filePaths: string[] = [];
  readonly fileCount: number;
  readonly linkCount: number;
  readonly directoryCount: number;
  private readonly digests: Buffer;
  private readonly cutDigests: Buffer;
  /** Per file, how many chunks of files cut into several come before its own: where its chunks' digests start. */
  private readonly cutBefore: number[] = [];

  constructor(private readonly table: Contents) {
    const { files, chunks } = table;
    let path = "";
    for (let i = 0; i < files.paths.length; i++) this.filePaths.push((path = path.slice(0, files.shared[i]) + files.paths[i]));
    this.fileCount = files.paths.length;
    this.linkCount = files.links.paths.length;
    this.directoryCount = table.directories.paths.length;
    this.digests = Buffer.from(files.sha256, "base64");
    this.cutDigests = Buffer.from(chunks.sha256, "base64");
    let cut = 0;
    for (let i = 0; i < this.fileCount; i++) {
      this.cutBefore.push(cut);
      const [start, end] = this.chunkRange(i);
      if (end - start > 1) cut += end - start;
    }
  }

  sameFile(i: number, other: TableView, j: number): boolean {
    const [a, b] = [this.table, other.table];
    if (a.files.sizes[i] !== b.files.sizes[j] || a.files.modes[i] !== b.files.modes[j] || a.mtimes[i] !== b.mtimes[j]) return false;
    if (!sameDigest(this.digests, i, other.digests, j)) return false;
    const [start, end] = this.chunkRange(i);
    const [otherStart, otherEnd] = other.chunkRange(j);
    if (end - start !== otherEnd - otherStart) return false;
    for (let c = 0; c < end - start; c++) {
      const [x, y] = [start + c, otherStart + c];
      if (a.tarballs[a.chunks.tarball[x]!]!.key !== b.tarballs[b.chunks.tarball[y]!]!.key) return false;
      if (a.chunks.offset[x] !== b.chunks.offset[y] || a.chunks.length[x] !== b.chunks.length[y] || a.chunks.size[x] !== b.chunks.size[y]) return false;
      if (end - start > 1 && !sameDigest(this.cutDigests, this.cutBefore[i]! + c, other.cutDigests, other.cutBefore[j]! + c)) return false;
    }
    return true;
  }

  sameLink(i: number, other: TableView, j: number): boolean {
    return this.table.files.links.targets[i] === other.table.files.links.targets[j] && this.table.mtimes[this.fileCount + i] === other.table.mtimes[other.fileCount + j];
  }

  sameDirectory(i: number, other: TableView, j: number): boolean {
    const [a, b] = [this.table.directories, other.table.directories];
    return a.modes[i] === b.modes[j] && a.mtimes[i] === b.mtimes[j];
  }

  file(i: number): TableEntries["files"][number] {
    const { files, mtimes } = this.table;
    return { path: this.filePaths[i]!, size: files.sizes[i]!, mode: files.modes[i]!, sha256: this.fileSha256(i), mtime: mtimes[i]!, chunks: this.chunks(i) };
  }

  /** File i's chunks; a file of one chunk has the file's SHA-256 as its chunk's. */
  chunks(i: number): ContentRef {
    const { chunks, tarballs } = this.table;
    const [start, end] = this.chunkRange(i);
    const refs: ContentRef = [];
    for (let c = start; c < end; c++) {
      const cut = this.cutBefore[i]! + c - start;
      const sha256 = end - start > 1 ? this.cutDigests.toString("hex", cut * DIGEST_BYTES, (cut + 1) * DIGEST_BYTES) : this.fileSha256(i);
      refs.push({ tarball: tarballs[chunks.tarball[c]!]!.key, offset: chunks.offset[c]!, length: chunks.length[c]!, size: chunks.size[c]!, sha256 });
    }
    return refs;
  }

  fileSha256(i: number): string {
    return this.digests.toString("hex", i * DIGEST_BYTES, (i + 1) * DIGEST_BYTES);
  }

  link(i: number): TableEntries["links"][number] {
    const { links } = this.table.files;
    return { path: links.paths[i]!, target: links.targets[i]!, mtime: this.table.mtimes[this.fileCount + i]! };
  }

  directory(i: number): TableEntries["directories"][number] {
    const { paths, modes, mtimes } = this.table.directories;
    return { path: paths[i]!, mode: modes[i]!, mtime: mtimes[i]! };
  }

  private chunkRange(i: number): [number, number] {
    const { first, tarball } = this.table.chunks;
    return [first[i]!, i + 1 < first.length ? first[i + 1]! : tarball.length];
  }
}

function sameDigest(digests: Buffer, at: number, others: Buffer, otherAt: number): boolean {
  return digests.compare(others, otherAt * DIGEST_BYTES, (otherAt + 1) * DIGEST_BYTES, at * DIGEST_BYTES, (at + 1) * DIGEST_BYTES) === 0;
}
