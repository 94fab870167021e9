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
// Each file's SHA-256 is computed from the very buffers written into the
// tarball (no second read), for the manifest's file list (file-list.ts).
import { createHash, hash as hashOnce } from "node:crypto";
import { fstatSync, read, readSync } from "node:fs";
import { createGzip } from "node:zlib";
import { pipeline, Transform } from "node:stream";
import { globMatcher } from "../tools/glob.js";
import tar from "tar-stream";
import { fail, FileToolsError } from "../errors.js";
import type { Workspace } from "../workspace/workspace.js";
import type { Entry } from "../workspace/entry.js";
import type { OpenedFile, WalkEntry } from "../workspace/walk.js";
import { translateErrno } from "../workspace/errno.js";
import { isLoneFile } from "../workspace/lone-file.js";
import { MAX_CONTENT_BYTES, MAX_DEPTH, MAX_ENTRIES, MAX_PATH_BYTES, MAX_SYMLINK_TARGET_BYTES } from "../workspace/limits.js";
import { byteLengthOfPath, type Components } from "../workspace/paths.js";
import { bytesOfName, hasRawBytes } from "../workspace/names.js";
import { FileListBuilder, type FileList } from "./file-list.js";

/** Files up to this size are read with one synchronous positional read (cheaper than several async calls). */
const SMALL_FILE_BYTES = 1 << 20;
const CHUNK_BYTES = 1 << 20;

export interface PackOptions {
  /** Globs (workspace paths without the leading "/"): only matching files and links go in. Empty = all. */
  include?: readonly string[];
  signal?: AbortSignal;
}

export interface PackedTarball {
  /** The gzipped tarball's bytes. */
  bytes: AsyncIterable<Uint8Array>;
  /** Regular files packed so far (final once `bytes` is consumed). */
  readonly fileCount: number;
  /** The files and links packed, with their sizes, modes and SHA-256s; call once `bytes` is consumed. */
  fileList(): FileList;
}

/** What went into the tarball for one regular file. */
interface PackedFile {
  size: number;
  mode: number;
  digest: Buffer;
}

export function packWorkspace(workspace: Workspace, options: PackOptions = {}): PackedTarball {
  const include = options.include?.filter((g) => g !== "") ?? [];
  const matches = include.length > 0 ? globMatcher(include, "include") : null;
  const pack = tar.pack();
  const gzip = createGzip({ level: 6 });
  const list = new FileListBuilder();
  const result = { fileCount: 0, bytes: gzip as AsyncIterable<Uint8Array>, fileList: () => list.build() };
  // Coalesce the many small tar writes (512-byte headers, small files) before gzip: one zlib call per ~1 MiB.
  pipeline(pack, coalescer(1 << 20), gzip, () => undefined);

  let members = 0;
  let contentBytes = 0;
  const produce = async () => {
    // The walk opens regular files relative to the directory it holds (O_NOFOLLOW), no path lookups.
    const walk = workspace.walk([], {
      recursive: true,
      maxDepth: 0,
      includeHidden: true,
      respectGitignore: false,
      open: (file) => !matches || matches(file.path.slice(1)),
    });
    for await (const entry of walk) {
      if (options.signal?.aborted) {
        await entry.opened?.close();
        options.signal.throwIfAborted();
      }
      // Globs see the shown (escaped) path; the member is named by the held name's bytes.
      if (matches && entry.type !== "directory" && !matches(entry.path.slice(1))) continue;
      if (entry.type === "other") continue; // sockets, FIFOs and devices are not packed
      if (entry.type === "directory" && matches) continue;
      checkLimits(entry, ++members);
      const name = entry.parts.join("/");
      if (entry.type === "directory") {
        await addEntry(pack, { ...common(entry), name: name + "/", type: "directory", mode: entry.mode & 0o777 });
      } else if (entry.type === "symlink") {
        const linkname = await workspace.readLink(entry.parts).catch(() => null);
        if (linkname === null) continue;
        if (bytesOfName(linkname).length > MAX_SYMLINK_TARGET_BYTES) tooLarge(`${entry.path}'s target is longer than ${MAX_SYMLINK_TARGET_BYTES} bytes`);
        await addEntry(pack, { ...common(entry), name, type: "symlink", linkname, mode: 0o777 });
        list.addLink(entry.path, linkname);
      } else {
        contentBytes += Number(entry.size);
        if (contentBytes > MAX_CONTENT_BYTES) tooLarge(`the workspace holds more than ${MAX_CONTENT_BYTES} bytes of files`);
        const packed = entry.opened ? await addOpened(pack, entry, entry.opened, name) : await addFile(pack, workspace, entry, name);
        if (packed) {
          result.fileCount++;
          list.addFile(entry.path, packed.size, packed.mode, packed.digest);
        }
      }
    }
    pack.finalize();
  };
  produce().catch((raw: unknown) => {
    // A disk error is the disk's (a FileToolsError for the caller), not the store's.
    const translated = translateErrno(raw, "/");
    const error = translated instanceof Error ? translated : new Error(String(translated));
    pack.destroy(error);
    gzip.destroy(error);
  });
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

function addEntry(pack: tar.Pack, header: Header): Promise<void> {
  withLongNames(pack, header);
  return new Promise((resolve, reject) => {
    pack.entry(header, (error) => (error ? reject(error) : resolve()));
  });
}

/**
 * Adds a member to `pack` with its names as held names (workspace/names.ts),
 * their exact bytes stored (see withLongNames); for re-packing members.
 * Call with no other member open.
 */
export function packMember(pack: tar.Pack, header: Header, callback: (error?: Error | null) => void): ReturnType<tar.Pack["entry"]> {
  withLongNames(pack, header);
  return pack.entry(header, callback);
}

/** Opens a member whose header `header` is; the sink takes its content. */
function openEntry(pack: tar.Pack, header: Header): Promise<{ sink: ReturnType<tar.Pack["entry"]>; done: Promise<void> }> {
  withLongNames(pack, header);
  let done!: Promise<void>;
  return new Promise((resolve) => {
    done = new Promise<void>((ok, ko) => {
      const sink = pack.entry(header, (error) => (error ? ko(error) : ok()));
      resolve({ sink, done });
    });
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

/** Packs a file the walk opened; null when it turned out not to be a lone regular file. */
async function addOpened(pack: tar.Pack, entry: Entry, opened: OpenedFile, name: string): Promise<PackedFile | null> {
  try {
    const stats = fstatSync(opened.fd);
    if (!stats.isFile() || stats.nlink !== 1) return null;
    const size = stats.size;
    const header = { mtime: stats.mtime, uid: 0, gid: 0, uname: "", gname: "", name, type: "file" as const, size, mode: stats.mode & 0o777 };
    // The first chunk is read, and the link rule checked on it, before the member is started: a file
    // linked from outside meanwhile is left out like any hard-linked file (lone-file.ts).
    const first = await readChunk(opened.fd, 0, Math.min(size, size <= SMALL_FILE_BYTES ? size : CHUNK_BYTES), size <= SMALL_FILE_BYTES);
    if (!isLoneFile(opened.fd)) return null;
    const { sink, done } = await openEntry(pack, header);
    // A small file is one buffer, hashed in one call: no Hash object (a native context the GC does not weigh) per file.
    const whole = size <= SMALL_FILE_BYTES;
    const hash = whole ? null : createHash("sha256");
    let position = 0;
    while (position < size) {
      const want = Math.min(size - position, size <= SMALL_FILE_BYTES ? size : CHUNK_BYTES);
      const buffer = position === 0 ? first : await readChunk(opened.fd, position, want, false);
      if (buffer.length < want || (position > 0 && !isLoneFile(opened.fd))) {
        sink.destroy(new Error(`${entry.path} changed while it was being snapshotted`));
        fail("CONTENT_CHANGED", `${entry.path} changed while it was being snapshotted`);
      }
      const filled = buffer.length;
      position += filled;
      hash?.update(buffer);
      if (!sink.write(buffer)) await new Promise<void>((resolve) => sink.once("drain", () => resolve()));
    }
    sink.end(undefined as never);
    await done;
    return { size, mode: header.mode, digest: hash ? hash.digest() : hashOnce("sha256", first, "buffer") };
  } finally {
    await opened.close();
  }
}

/** Up to `want` bytes at `position` (fewer only at the end of the file). */
async function readChunk(fd: number, position: number, want: number, synchronous: boolean): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(want);
  let filled = 0;
  while (filled < want) {
    const n = synchronous ? readSync(fd, buffer, filled, want - filled, position + filled) : await readAsync(fd, buffer, filled, want - filled, position + filled);
    if (n === 0) break;
    filled += n;
  }
  return buffer.subarray(0, filled);
}

function readAsync(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => read(fd, buffer, offset, length, position, (error, n) => (error ? reject(error) : resolve(n))));
}

/** Packs one regular file; null when it vanished or cannot be read safely (e.g. it has several hard links). */
async function addFile(pack: tar.Pack, workspace: Workspace, entry: WalkEntry, name: string): Promise<PackedFile | null> {
  let file;
  try {
    file = await workspace.openFile(entry.parts);
  } catch (error) {
    if (error instanceof FileToolsError) return null;
    throw error;
  }
  try {
    const size = file.size;
    const mode = file.entry.mode & 0o777;
    const { sink, done } = await openEntry(pack, { ...common(file.entry), name, type: "file", size, mode });
    const hash = createHash("sha256");
    let written = 0;
    for await (const chunk of file.chunks()) {
      const part = written + chunk.length > size ? chunk.subarray(0, size - written) : chunk;
      written += part.length;
      hash.update(part);
      if (!sink.write(part)) await new Promise<void>((resolve) => sink.once("drain", () => resolve()));
      if (written >= size) break;
    }
    if (written < size) {
      // The file shrank while it was read: fail rather than store a member that lies about its size.
      sink.destroy(new Error(`${entry.path} changed while it was being snapshotted`));
      fail("CONTENT_CHANGED", `${entry.path} changed while it was being snapshotted`);
    }
    sink.end(undefined as never);
    await done;
    return { size, mode, digest: hash.digest() };
  } finally {
    await file.close();
  }
}
