// Packs a workspace into a gzipped tarball, streamed: members in the walk's
// deterministic order (sorted names, a directory before its contents), no
// owner ids or names, symlinks stored as links (never followed), temp files
// excluded (the walk skips them), set-uid/set-gid bits dropped. Everything is
// read through the workspace module.
//
// Names are stored as their exact bytes: valid UTF-8 as before (ustar, or
// pax `path`/`linkpath` when long or non-ASCII); a name or link target that
// is not valid UTF-8 in a GNU long-name record ('L'/'K', raw bytes, which
// GNU tar, bsdtar and our extract read back byte for byte), the ustar
// header then carrying an ASCII stand-in. A tree past the limits a restore
// accepts (workspace/limits.ts) fails the pack with QUOTA_EXCEEDED, naming
// the entry, rather than store a snapshot no daemon could restore.
//
// A regular file is read whole, and checked by the one-link rule at open and
// after the read (workspace/opened-file.ts), before any byte of its member
// goes out: a small one in memory, a larger one through a scratch file
// (spool.ts). One that fails the rule is left out, with a warning, and is not
// in the file list. The member is what was read: a file that grew meanwhile
// is cut at its size at open, one that shrank is stored at the size read.
//
// Each file's SHA-256 is computed from the very buffers written into the
// tarball (no second read), for the manifest's file list (file-list.ts).
import { createHash, hash as hashOnce } from "node:crypto";
import { createGzip } from "node:zlib";
import { pipeline, Transform } from "node:stream";
import type { Logger } from "pino";
import { globMatcher } from "../tools/glob.js";
import tar from "tar-stream";
import { fail } from "../errors.js";
import type { Workspace } from "../workspace/workspace.js";
import type { Entry } from "../workspace/entry.js";
import type { WalkEntry } from "../workspace/walk.js";
import { WHOLE_READ_BYTES, type OpenedFile } from "../workspace/opened-file.js";
import { translateErrno } from "../workspace/errno.js";
import { MAX_CONTENT_BYTES, MAX_DEPTH, MAX_ENTRIES, MAX_PATH_BYTES, MAX_SYMLINK_TARGET_BYTES } from "../workspace/limits.js";
import { byteLengthOfPath, type Components } from "../workspace/paths.js";
import { bytesOfName, hasRawBytes } from "../workspace/names.js";
import { FileListBuilder, type FileList } from "./file-list.js";
import { Spool } from "./spool.js";

export interface PackOptions {
  /** Globs (workspace paths without the leading "/"): only matching files and links go in. Empty = all. */
  include?: readonly string[];
  signal?: AbortSignal;
  /** Where files larger than WHOLE_READ_BYTES are spooled while they are checked (the daemon's scratch directory). */
  scratchDir: string;
  /** Told of each file left out because it may share its content with a file outside the workspace. */
  logger?: Pick<Logger, "warn">;
}

export interface PackedTarball {
  /** The gzipped tarball's bytes. */
  bytes: AsyncIterable<Uint8Array>;
  /** Regular files packed so far (final once `bytes` is consumed). */
  readonly fileCount: number;
  /** The files and links packed, with their sizes, modes and SHA-256s; call once `bytes` is consumed. */
  fileList(): FileList;
}

/** Why a regular file was left out, for the daemon's log. */
const LEFT_OUT = {
  "hard-linked": "it has more than one hard link (at open or after the read) and may share its content with a file outside the workspace",
  "kept-changing": "its name was replaced each time it was opened",
};

/** What went into the tarball for one regular file. */
interface PackedFile {
  size: number;
  mode: number;
  digest: Buffer;
}

export function packWorkspace(workspace: Workspace, options: PackOptions): PackedTarball {
  const include = options.include?.filter((g) => g !== "") ?? [];
  const matches = include.length > 0 ? globMatcher(include, "include") : null;
  const pack = tar.pack();
  const gzip = createGzip({ level: 6 });
  const list = new FileListBuilder();
  const result = { fileCount: 0, bytes: started(), fileList: () => list.build() };
  // Coalesce the many small tar writes (512-byte headers, small files) before gzip: one zlib call per ~1 MiB.
  pipeline(pack, coalescer(1 << 20), gzip, () => undefined);

  let members = 0;
  let contentBytes = 0;
  const spool = new Spool(options.scratchDir);
  const leftOut = (path: string, reason: keyof typeof LEFT_OUT): void => options.logger?.warn({ workspace: workspace.id, path, reason }, `file left out of the tarball: ${LEFT_OUT[reason]}`);
  // Stops reading a large file for a tarball nobody will read.
  const stillWanted = (): void => {
    options.signal?.throwIfAborted();
    if (pack.destroying) throw new Error("the tarball was abandoned");
  };
  const packEntry = async (entry: WalkEntry): Promise<void> => {
    options.signal?.throwIfAborted();
    // Globs see the shown (escaped) path; the member is named by the held name's bytes.
    if (matches && entry.type !== "directory" && !matches(entry.path.slice(1))) return;
    if (entry.type === "other") return; // sockets, FIFOs and devices are not packed
    if (entry.type === "directory" && matches) return;
    checkLimits(entry, ++members);
    const name = entry.parts.join("/");
    if (entry.type === "directory") {
      await addMember(pack, { ...common(entry), name: name + "/", type: "directory", mode: entry.mode & 0o777 });
    } else if (entry.type === "symlink") {
      const linkname = await workspace.readLink(entry.parts).catch(() => null);
      if (linkname === null) return;
      if (bytesOfName(linkname).length > MAX_SYMLINK_TARGET_BYTES) tooLarge(`${entry.path}'s target is longer than ${MAX_SYMLINK_TARGET_BYTES} bytes`);
      await addMember(pack, { ...common(entry), name, type: "symlink", linkname, mode: 0o777 });
      list.addLink(entry.path, linkname);
    } else if (entry.opened) {
      contentBytes += entry.opened.size;
      if (contentBytes > MAX_CONTENT_BYTES) tooLarge(`the workspace holds more than ${MAX_CONTENT_BYTES} bytes of files`);
      const packed = await addFile(pack, entry.opened, name, spool, stillWanted);
      if (!packed) return leftOut(entry.path, "hard-linked");
      result.fileCount++;
      list.addFile(entry.path, packed.size, packed.mode, packed.digest);
    } else if (entry.skipped === "hard-linked" || entry.skipped === "kept-changing") {
      leftOut(entry.path, entry.skipped);
    } // else gone, or no longer a regular file, since the walk listed it: nothing to say
  };
  const produce = async () => {
    // The walk opens regular files relative to the directory it holds (O_NOFOLLOW), no path lookups.
    const walk = workspace.walk([], {
      recursive: true,
      maxDepth: 0,
      includeHidden: true,
      respectGitignore: false,
      open: (file) => !matches || matches(file.path.slice(1)),
    });
    try {
      for await (const entry of walk) {
        try {
          await packEntry(entry);
        } finally {
          entry.opened?.close();
        }
      }
    } finally {
      await spool.close();
    }
    pack.finalize();
  };
  // Nothing is walked or opened before the first byte is asked for: a tarball its consumer never
  // reads (a store that failed before it began) holds nothing, where a started one would wait for
  // room with the walk's directories and a file open, for good.
  async function* started(): AsyncGenerator<Uint8Array> {
    produce().catch((raw: unknown) => {
      // A disk error is the disk's (a FileToolsError for the caller), not the store's.
      const translated = translateErrno(raw, "/");
      const error = translated instanceof Error ? translated : new Error(String(translated));
      pack.destroy(error);
      gzip.destroy(error);
    });
    yield* gzip as AsyncIterable<Uint8Array>;
  }
  return result;
}

function coalescer(target: number): Transform {
  let parts: Buffer[] = [];
  let size = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      parts.push(chunk);
      size += chunk.length;
      if (size >= target) {
        const out = Buffer.concat(parts, size);
        parts = [];
        size = 0;
        callback(null, out);
      } else callback();
    },
    flush(callback) {
      callback(null, size > 0 ? Buffer.concat(parts, size) : undefined);
    },
  });
}

function common(entry: Entry) {
  return { mtime: new Date(Number(entry.mtimeNs / 1_000_000n)), uid: 0, gid: 0, uname: "", gname: "" };
}

function tooLarge(what: string): never {
  fail("QUOTA_EXCEEDED", `cannot snapshot the workspace: ${what}, past what a restore accepts; move or delete it`);
}

/** Refuses the `count`th member when it is past the limits of what a restore accepts. */
function checkLimits(entry: WalkEntry, count: number): void {
  if (count > MAX_ENTRIES) tooLarge(`it holds more than ${MAX_ENTRIES} entries`);
  const parts: Components = entry.parts;
  if (parts.length > MAX_DEPTH) tooLarge(`${entry.path.slice(0, 200)}… is deeper than ${MAX_DEPTH} levels`);
  if (byteLengthOfPath(parts) > MAX_PATH_BYTES) tooLarge(`${entry.path.slice(0, 200)}… is longer than ${MAX_PATH_BYTES} bytes`);
}

type Header = tar.Header | (Partial<tar.Header> & { name: string });
type Sink = ReturnType<tar.Pack["entry"]>;

/**
 * Adds a member (see packMember), its content known in full before it
 * starts, and resolves once tar-stream took it.
 */
async function addMember(pack: tar.Pack, header: Header, content?: Buffer | AsyncIterable<Buffer>): Promise<void> {
  let settle!: (error?: Error | null) => void;
  const done = new Promise<void>((resolve, reject) => (settle = (error) => (error ? reject(error) : resolve())));
  done.catch(() => undefined); // awaited below, unless writing failed first (that error is the one thrown)
  const sink = packMember(pack, header, (error) => settle(error));
  try {
    if (content instanceof Buffer) sink.write(content);
    else if (content) {
      for await (const chunk of content) {
        if (sink.destroying) break; // the pack was destroyed: `done` has its error
        if (!sink.write(chunk)) await drained(sink);
      }
    }
    sink.end(undefined as never);
  } catch (error) {
    sink.destroy(error as Error);
    throw error;
  }
  await done;
}

/**
 * Adds a member to `pack` with its names as held names (workspace/names.ts),
 * their exact bytes stored (see withLongNames); for re-packing members.
 * Call with no other member open. A pack destroyed under an open member (a
 * cancelled export, a failed upload) destroys its sink with the pack's error:
 * the sink is listened to here (an 'error' event nobody listens to ends the
 * process), and `callback` gets the error.
 */
export function packMember(pack: tar.Pack, header: Header, callback: (error?: Error | null) => void): Sink {
  withLongNames(pack, header);
  const sink = pack.entry(header, callback);
  sink.on("error", () => undefined);
  return sink;
}

/** Resolves when the sink takes more, or is destroyed. */
function drained(sink: Sink): Promise<void> {
  return new Promise((resolve) => {
    if (sink.destroying) return resolve();
    const go = (): void => {
      sink.off("drain", go);
      sink.off("close", go);
      resolve();
    };
    sink.on("drain", go);
    sink.on("close", go);
  });
}

/**
 * A name or link target that is not valid UTF-8 goes in a GNU long-name
 * record before the member ('L' for the name, 'K' for the target), its
 * exact bytes; the header keeps an ASCII stand-in (so that tar-stream writes
 * no pax record, whose values it would read back as UTF-8). Pushed while no
 * member is open: the packer adds members one at a time.
 */
function withLongNames(pack: tar.Pack, header: Header): void {
  const linkname = header.linkname ?? "";
  if (!hasRawBytes(header.name) && !hasRawBytes(linkname)) return;
  const isDirectory = header.type === "directory";
  const name = isDirectory ? header.name.replace(/\/$/, "") : header.name;
  pack.push(longNameRecord("L", Buffer.concat([bytesOfName(name), Buffer.from(isDirectory ? "/" : "")])));
  header.name = asciiStandIn(name, 98);
  if (linkname) {
    pack.push(longNameRecord("K", bytesOfName(linkname)));
    header.linkname = asciiStandIn(linkname, 99);
  }
}

/** Printable ASCII of at most `max` bytes, for readers that know no long names. */
function asciiStandIn(name: string, max: number): string {
  return name.replace(/[^\x20-\x7e]/gu, "_").slice(-max).replace(/^\/+/, "") || "_";
}

/** A GNU tar long-name record: a "././@LongLink" header of type `type`, then the bytes (NUL-terminated, padded). */
function longNameRecord(type: "L" | "K", bytes: Buffer): Buffer {
  const size = bytes.length + 1;
  const record = Buffer.alloc(512 + Math.ceil(size / 512) * 512);
  record.write("././@LongLink", 0, "ascii");
  record.write("0000644\0", 100, "ascii");
  record.write("0000000\0", 108, "ascii");
  record.write("0000000\0", 116, "ascii");
  record.write(size.toString(8).padStart(11, "0") + "\0", 124, "ascii");
  record.write("00000000000\0", 136, "ascii");
  record.write(type, 156, "ascii");
  record.write("ustar  \0", 257, "ascii"); // GNU magic and version
  record.fill(0x20, 148, 156); // the checksum counts its own field as spaces
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += record[i]!;
  record.write(sum.toString(8).padStart(6, "0") + "\0 ", 148, "ascii");
  bytes.copy(record, 512);
  return record;
}

/**
 * Packs a file the walk opened, read whole and checked (opened-file.ts)
 * before its member starts: a small file in one buffer, a larger one through
 * the spool. Null when it failed the one-link rule (nothing of it went in).
 */
async function addFile(pack: tar.Pack, file: OpenedFile, name: string, spool: Spool, stillWanted: () => void): Promise<PackedFile | null> {
  const header = { mtime: file.mtime, uid: 0, gid: 0, uname: "", gname: "", name, type: "file" as const, mode: file.mode & 0o777 };
  if (file.size <= WHOLE_READ_BYTES) {
    let content: Buffer = Buffer.alloc(0);
    if (!(await file.readAll((chunk) => void (content = chunk)))) return null;
    await addMember(pack, { ...header, size: content.length }, content);
    // One buffer, hashed in one call: no Hash object (a native context the GC does not weigh) per file.
    return { size: content.length, mode: header.mode, digest: hashOnce("sha256", content, "buffer") };
  }
  const hash = createHash("sha256");
  spool.clear();
  const lone = await file.readAll(async (chunk) => {
    stillWanted();
    hash.update(chunk);
    await spool.append(chunk);
  });
  if (!lone) return null;
  await addMember(pack, { ...header, size: spool.length }, spool.chunks());
  return { size: spool.length, mode: header.mode, digest: hash.digest() };
}
