// Writes a snapshot's tarball in the seekable format, and its table of
// contents (contents.ts). The tarball is a valid `.tar.gz` — `tar -xzf`
// extracts it — made of gzip members that concatenate (RFC 1952 §2.2):
//
//   one member per run of headers: directories, links, and the header
//     records of the next file whose content follows (tar-headers.ts);
//   one member per CHUNK_BYTES of a file's content, the last one with the
//     tar padding after it;
//   a last member with the two zero blocks that end a tar stream.
//
// A file's content therefore starts a member of its own: a reader inflates
// just its chunks (a ranged read), and an export copies them byte for byte
// under any header. Content the base snapshot already holds (same SHA-256)
// is not stored again: the table of contents points at the base's chunks,
// and a file whose stat matches what the last snapshot read (the stat cache,
// stat-cache.ts) is not even read. Members are compressed in batches by the
// gzip pool's threads (gzip-pool.ts), several at a time, and written in order.
//
// What is read and packed follows pack rules unchanged: the walk's order
// (sorted names, a directory before its contents), no owner ids, symlinks
// stored as links, temp files and special files skipped, set-uid/set-gid
// dropped, the one-link rule checked at open and after the read before any
// byte of a file goes out (a large file through a scratch spool), the tree
// limits of a restore enforced (QUOTA_EXCEEDED, naming the entry).
import { createHash, hash as hashOnce } from "node:crypto";
import type { Logger } from "pino";
import { fail } from "../errors.js";
import { globMatcher } from "../tools/glob.js";
import type { Workspace } from "../workspace/workspace.js";
import type { WalkEntry } from "../workspace/walk.js";
import type { TreeFingerprint } from "../workspace/fingerprint.js";
import { WHOLE_READ_BYTES, type OpenedFile } from "../workspace/opened-file.js";
import { translateErrno } from "../workspace/errno.js";
import { wholeSeconds } from "../workspace/entry.js";
import { MAX_CONTENT_BYTES, MAX_DEPTH, MAX_ENTRIES, MAX_PATH_BYTES, MAX_SYMLINK_TARGET_BYTES } from "../workspace/limits.js";
import { byteLengthOfPath } from "../workspace/paths.js";
import { bytesOfName } from "../workspace/names.js";
import { FileListBuilder, type FileList } from "./file-list.js";
import { CHUNK_BYTES, ContentsBuilder, contentIndex, type ContentIndex, type Contents } from "./contents.js";
import { END_OF_ARCHIVE, headerRecords, paddingOf } from "./tar-headers.js";
import { Spool } from "./spool.js";
import { compressMembers, type GzippedBatch } from "./gzip-pool.js";
import { nowNs, settled, type KnownFiles, type StatRecord } from "./stat-cache.js";

/** Uncompressed bytes handed to the pool ahead of the writer: bounds memory, keeps every thread busy. */
const AHEAD_BYTES = 16 << 20;
const AHEAD_BATCHES = 64;
/** A batch for the pool: this many bytes, or members, whichever comes first. */
const BATCH_BYTES = 1 << 20;
const BATCH_MEMBERS = 512;

/** Told where a member went in the tarball. */
type Placed = ((offset: number, length: number) => void) | undefined;

export interface SeekableOptions {
  /** The tarball's store key (chunks point at it). */
  key: string;
  /** Globs (workspace paths without the leading "/"): only matching files and links go in. Empty = all. */
  include?: readonly string[];
  /** The snapshot this one is made from: content it holds is pointed at, not stored again. */
  base?: Contents;
  /** What the last snapshot read, by path: a file whose version still matches is not read. */
  known?: KnownFiles;
  /** gzip level (1–9). */
  level: number;
  signal?: AbortSignal;
  /** Where files larger than WHOLE_READ_BYTES are spooled while they are checked (the daemon's scratch directory). */
  scratchDir: string;
  /** Told of each file left out because it may share its content with a file outside the workspace. */
  logger?: Pick<Logger, "warn">;
  /** Fed every entry the walk finds (the copy's fingerprint, taken by the same walk: no second one). */
  fingerprint?: TreeFingerprint;
}

export interface SeekablePack {
  /** The gzipped tarball's bytes. */
  bytes: AsyncIterable<Uint8Array>;
  /** Regular files in the tree (final once `bytes` is consumed). */
  readonly fileCount: number;
  /** Content bytes of the tree. */
  readonly treeBytes: number;
  /** The table of contents; once `bytes` is consumed. */
  contents(workspace: string, snapshot: string): Contents;
  /** The files and links packed, with sizes, modes and SHA-256s; once `bytes` is consumed. */
  fileList(): FileList;
  /** What was read, for the stat cache of the next snapshot; once `bytes` is consumed. */
  statRecords(): StatRecord[];
}

/** Why a regular file was left out, for the daemon's log. */
const LEFT_OUT = {
  "hard-linked": "it has more than one hard link (at open or after the read) and may share its content with a file outside the workspace",
  "kept-changing": "its name was replaced each time it was opened",
};

export function packSeekable(workspace: Workspace, options: SeekableOptions): SeekablePack {
  const include = options.include?.filter((g) => g !== "") ?? [];
  const matches = include.length > 0 ? globMatcher(include, "include") : null;
  const list = new FileListBuilder();
  const contents = new ContentsBuilder();
  contents.useTarball(options.key, 0);
  for (const tarball of options.base?.tarballs ?? []) contents.useTarball(tarball.key, tarball.bytes);
  // Content at hand by SHA-256: the base's chunks. Not this tarball's own: every file in it has its member, so that a
  // snapshot written whole is one tarball of the whole tree (an export streams it as stored).
  const held: ContentIndex = options.base ? contentIndex(options.base) : new Map();
  const records: StatRecord[] = [];
  // A file changed this close to the walk's start may change again within its timestamp's tick, unseen: not cached.
  const startedNs = nowNs();
  const members = new OrderedMembers(options.level);
  const spool = new Spool(options.scratchDir);
  const state = { fileCount: 0, treeBytes: 0, entries: 0 };
  let headers: Buffer[] = [];

  const leftOut = (path: string, reason: keyof typeof LEFT_OUT): void => options.logger?.warn({ workspace: workspace.id, path, reason }, `file left out of the tarball: ${LEFT_OUT[reason]}`);
  const stillWanted = (): void => {
    options.signal?.throwIfAborted();
    if (members.abandoned) throw new Error("the tarball was abandoned");
  };
  /** Counts a file and lists it (`sha256` in hex: an unchanged file's comes from the stat cache as it is); its mtime in seconds. */
  const listFile = (entry: WalkEntry, size: number, mode: number, sha256: string): number => {
    state.fileCount++;
    state.treeBytes += size;
    if (state.treeBytes > MAX_CONTENT_BYTES) tooLarge(`the workspace holds more than ${MAX_CONTENT_BYTES} bytes of files`);
    list.addFile(entry.path, size, mode, sha256);
    if (settled(entry, startedNs)) records.push({ path: entry.path, version: entry.version, sha256 });
    return seconds(entry.mtimeNs);
  };
  /** A file read whose content the base does not hold: its header and chunks go into the tarball. */
  const addContent = async (entry: WalkEntry, mode: number, sha256: string, mtime: number, read: ReadFile): Promise<void> => {
    const size = read.size;
    const sizes = Array.from({ length: Math.ceil(size / CHUNK_BYTES) }, (_, i) => Math.min(CHUNK_BYTES, size - i * CHUNK_BYTES));
    const slots = contents.addFile(mtime, sizes.map((bytes) => ({ tarball: options.key, offset: 0, length: 0, size: bytes, sha256: sha256 })));
    headers.push(headerRecords({ name: entry.parts.join("/"), type: "file", mode, size, mtime }));
    await flushHeaders();
    let i = 0;
    for await (const piece of read.pieces()) {
      stillWanted();
      const slot = slots[i]!;
      const last = ++i === slots.length;
      const raw = last && paddingOf(size) > 0 ? Buffer.concat([piece, Buffer.alloc(paddingOf(size))]) : piece;
      // A file of one chunk: the chunk's SHA-256 is the file's (already set).
      const chunkSha256 = slots.length > 1 ? hashOnce("sha256", piece, "buffer") : undefined;
      await members.add(raw, (offset, length) => contents.setChunk(slot, offset, length, chunkSha256));
    }
  };
  const flushHeaders = async (): Promise<void> => {
    if (headers.length === 0) return;
    const run = Buffer.concat(headers);
    headers = [];
    await members.add(run);
  };

  /**
   * Packs one entry; a promise only when it has to wait (a link read, a file
   * read and streamed): most of a run's entries are directories and unchanged
   * files, and an async call each was a good part of the garbage of a 20,000-file run.
   */
  const packEntry = (entry: WalkEntry): Promise<void> | undefined => {
    stillWanted();
    // Globs see the shown (escaped) path; the member is named by the held name's bytes.
    if (matches && entry.type !== "directory" && !matches(entry.path.slice(1))) return;
    if (entry.type === "other") return; // sockets, FIFOs and devices are not packed
    if (entry.type === "directory" && matches) return;
    if (entry.parts.length === 0) return; // the root itself
    checkLimits(entry, ++state.entries);
    if (entry.type === "directory") {
      const mtime = seconds(entry.mtimeNs);
      contents.addDirectory(entry.path, entry.mode & 0o777, mtime);
      headers.push(headerRecords({ name: entry.parts.join("/"), type: "directory", mode: entry.mode & 0o777, size: 0, mtime }));
    } else if (entry.type === "symlink") {
      return packLink(entry);
    } else if (!entry.opened && !entry.skipped && entry.type === "file") {
      // Not opened: its stat matches what the last snapshot read, and the base holds that content.
      const known = options.known?.get(entry.path)!;
      contents.addFile(listFile(entry, Number(entry.size), entry.mode & 0o777, known.sha256), held.get(known.sha256)!);
    } else if (entry.opened) {
      return packRead(entry, entry.opened);
    } else if (entry.skipped === "hard-linked" || entry.skipped === "kept-changing") {
      leftOut(entry.path, entry.skipped);
    } // else gone, or no longer a regular file, since the walk listed it: nothing to say
  };
  const packLink = async (entry: WalkEntry): Promise<void> => {
    const linkname = await workspace.readLink(entry.parts).catch(() => null);
    if (linkname === null) return;
    if (bytesOfName(linkname).length > MAX_SYMLINK_TARGET_BYTES) tooLarge(`${entry.path}'s target is longer than ${MAX_SYMLINK_TARGET_BYTES} bytes`);
    const mtime = seconds(entry.mtimeNs);
    headers.push(headerRecords({ name: entry.parts.join("/"), type: "symlink", mode: 0o777, size: 0, mtime, linkname }));
    list.addLink(entry.path, linkname);
    contents.addLink(mtime);
  };
  const packRead = async (entry: WalkEntry, opened: OpenedFile): Promise<void> => {
    const read = await readWhole(opened, spool, stillWanted);
    if (!read) return leftOut(entry.path, "hard-linked");
    const sha256 = read.sha256.toString("hex");
    const mtime = listFile(entry, read.size, opened.mode & 0o777, sha256);
    const at = held.get(sha256);
    if (at) contents.addFile(mtime, at);
    else await addContent(entry, opened.mode & 0o777, sha256, mtime, read);
  };

  const produce = async (): Promise<void> => {
    // The walk opens regular files relative to the directory it holds (O_NOFOLLOW), no path lookups.
    const walk = workspace.walk([], {
      recursive: true,
      maxDepth: 0,
      includeHidden: true,
      respectGitignore: false,
      open: (file) => {
        if (matches && !matches(file.path.slice(1))) return false;
        const known = options.known?.get(file.path);
        // Read unless its stat is the one read last time and its content is at hand (a version covers inode, size, mtime and ctime: a new link moves ctime).
        return !(known && known.version === file.version && held.has(known.sha256));
      },
    });
    try {
      for await (const entry of walk) {
        options.fingerprint?.add(entry);
        try {
          const waiting = packEntry(entry);
          if (waiting) await waiting;
        } finally {
          entry.opened?.close();
        }
      }
      headers.push(END_OF_ARCHIVE);
      await flushHeaders();
    } finally {
      await spool.close();
    }
  };

  return {
    bytes: members.output(produce),
    get fileCount() {
      return state.fileCount;
    },
    get treeBytes() {
      return state.treeBytes;
    },
    contents: (workspaceId, snapshot) => {
      contents.setBytes(options.key, members.written);
      return contents.build(workspaceId, snapshot, list.build());
    },
    fileList: () => list.build(),
    statRecords: () => records,
  };
}

/** A file read whole and checked by the one-link rule: its size, SHA-256, and its content again in CHUNK_BYTES pieces. */
interface ReadFile {
  size: number;
  sha256: Buffer;
  pieces(): AsyncIterable<Buffer>;
}

/** Reads a file (a large one into the spool, which the next file reuses: take its pieces first); null when it failed the rule. */
async function readWhole(file: OpenedFile, spool: Spool, stillWanted: () => void): Promise<ReadFile | null> {
  if (file.size <= WHOLE_READ_BYTES) {
    let content: Buffer = Buffer.alloc(0);
    if (!(await file.readAll((chunk) => void (content = chunk)))) return null;
    // One buffer, hashed in one call: no Hash object (a native context the GC does not weigh) per file.
    return { size: content.length, sha256: hashOnce("sha256", content, "buffer"), pieces: async function* () { if (content.length > 0) yield content; } };
  }
  const hash = createHash("sha256");
  spool.clear();
  const lone = await file.readAll(async (chunk) => {
    stillWanted();
    hash.update(chunk);
    await spool.append(chunk);
  });
  if (!lone) return null;
  return { size: spool.length, sha256: hash.digest(), pieces: () => spool.chunks(CHUNK_BYTES) };
}

/**
 * Gzip members compressed in the gzip pool's threads (gzip-pool.ts), in
 * batches, several at once, and written in the order they were added; each
 * one's offset and length told to its `placed` once written. `add` waits
 * while too much is ahead of the writer.
 */
class OrderedMembers {
  private readonly queue: Array<{ compressed: Promise<GzippedBatch>; raw: number; placed: Placed[] }> = [];
  private batch = { raw: [] as Buffer[], bytes: 0, placed: [] as Placed[] };
  private ahead = 0;
  private waiters: Array<() => void> = [];
  private done = false;
  private failure: { error: unknown } | undefined;
  /** Bytes written so far. */
  written = 0;
  /** The consumer stopped reading. */
  abandoned = false;

  constructor(private readonly level: number) {}

  async add(raw: Buffer, placed?: Placed): Promise<void> {
    this.batch.raw.push(raw);
    this.batch.bytes += raw.length;
    this.batch.placed.push(placed);
    if (this.batch.bytes >= BATCH_BYTES || this.batch.raw.length >= BATCH_MEMBERS) await this.dispatch();
  }

  /** Hands the members added so far to the pool. */
  async dispatch(): Promise<void> {
    if (this.batch.raw.length === 0) return;
    while (!this.abandoned && (this.ahead > AHEAD_BYTES || this.queue.length > AHEAD_BATCHES)) await this.waitForChange();
    const batch = this.batch;
    this.batch = { raw: [], bytes: 0, placed: [] };
    const compressed = compressMembers(batch.raw, this.level);
    compressed.catch(() => undefined); // awaited in order by output()
    this.queue.push({ compressed, raw: batch.bytes, placed: batch.placed });
    this.ahead += batch.bytes;
    this.notify();
  }

  /** The tarball's bytes, `produce` adding its members meanwhile; nothing runs before the first byte is asked for. */
  async *output(produce: () => Promise<void>): AsyncGenerator<Uint8Array> {
    produce()
      .then(() => this.dispatch())
      .then(
        () => this.finish(),
        (raw: unknown) => this.finish({ error: translateErrno(raw, "/") }),
      );
    try {
      for (;;) {
        const next = this.queue.shift();
        if (!next) {
          if (this.failure) throw this.failure.error instanceof Error ? this.failure.error : new Error(String(this.failure.error));
          if (this.done) return;
          await this.waitForChange();
          continue;
        }
        const { bytes, members } = await next.compressed;
        this.ahead -= next.raw;
        this.notify();
        let offset = this.written;
        for (let i = 0; i < members.length; i++) {
          next.placed[i]?.(offset, members[i]!.length);
          offset += members[i]!.length;
        }
        // The batch's members in one piece: one write to the store, not one per member.
        this.written += bytes.length;
        yield bytes;
      }
    } finally {
      this.abandoned = true;
      this.notify();
    }
  }

  private finish(failure?: { error: unknown }): void {
    this.done = true;
    this.failure = failure;
    this.notify();
  }

  private waitForChange(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

const MAX_SECONDS = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * An mtime's whole seconds, as a table of contents holds them: within a
 * safe integer, or no restore could read the table (a tmpfs holds 2^62 s;
 * past ±2^53 s, 285 million years, a time is cut there).
 */
function seconds(ns: bigint): number {
  const whole = wholeSeconds(ns);
  return Number(whole > MAX_SECONDS ? MAX_SECONDS : whole < -MAX_SECONDS ? -MAX_SECONDS : whole);
}

function tooLarge(what: string): never {
  fail("QUOTA_EXCEEDED", `cannot snapshot the workspace: ${what}, past what a restore accepts; move or delete it`);
}

/** Refuses the `count`th member when it is past the limits of what a restore accepts. */
function checkLimits(entry: WalkEntry, count: number): void {
  if (count > MAX_ENTRIES) tooLarge(`it holds more than ${MAX_ENTRIES} entries`);
  if (entry.parts.length > MAX_DEPTH) tooLarge(`${entry.path.slice(0, 200)}… is deeper than ${MAX_DEPTH} levels`);
  if (byteLengthOfPath(entry.parts) > MAX_PATH_BYTES) tooLarge(`${entry.path.slice(0, 200)}… is longer than ${MAX_PATH_BYTES} bytes`);
}
