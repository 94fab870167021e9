// Packs a workspace into a gzipped tarball, streamed: members in the walk's
// deterministic order (sorted names, a directory before its contents), no
// owner ids or names, symlinks stored as links (never followed), temp files
// excluded (the walk skips them), set-uid/set-gid bits dropped. Everything is
// read through the workspace module.
import { fstatSync, read, readSync } from "node:fs";
import { createGzip } from "node:zlib";
import { pipeline, Transform } from "node:stream";
import { globMatcher } from "../tools/glob.js";
import tar from "tar-stream";
import { fail, FileToolsError } from "../errors.js";
import type { Workspace } from "../workspace/workspace.js";
import type { Entry } from "../workspace/entry.js";
import type { OpenedFile } from "../workspace/walk.js";

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
}

export function packWorkspace(workspace: Workspace, options: PackOptions = {}): PackedTarball {
  const include = options.include?.filter((g) => g !== "") ?? [];
  const matches = include.length > 0 ? globMatcher(include, "include") : null;
  const pack = tar.pack();
  const gzip = createGzip({ level: 6 });
  const result = { fileCount: 0, bytes: gzip as AsyncIterable<Uint8Array> };
  // Coalesce the many small tar writes (512-byte headers, small files) before gzip: one zlib call per ~1 MiB.
  pipeline(pack, coalescer(1 << 20), gzip, () => undefined);

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
      const name = entry.path.slice(1);
      if (matches && entry.type !== "directory" && !matches(name)) continue;
      if (entry.type === "directory") {
        if (matches) continue;
        await addEntry(pack, { ...common(entry), name: name + "/", type: "directory", mode: entry.mode & 0o777 });
      } else if (entry.type === "symlink") {
        const linkname = await workspace.readLink(entry.path.slice(1).split("/")).catch(() => null);
        if (linkname === null) continue;
        await addEntry(pack, { ...common(entry), name, type: "symlink", linkname, mode: 0o777 });
      } else if (entry.type === "file" && entry.opened) {
        if (await addOpened(pack, entry, entry.opened, name)) result.fileCount++;
      } else if (entry.type === "file") {
        if (await addFile(pack, workspace, entry, name)) result.fileCount++;
      }
      // sockets, FIFOs and devices are not packed
    }
    pack.finalize();
  };
  produce().catch((error: unknown) => {
    pack.destroy(error instanceof Error ? error : new Error(String(error)));
    gzip.destroy(error instanceof Error ? error : new Error(String(error)));
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

function addEntry(pack: tar.Pack, header: tar.Header | (Partial<tar.Header> & { name: string })): Promise<void> {
  return new Promise((resolve, reject) => {
    pack.entry(header, (error) => (error ? reject(error) : resolve()));
  });
}

/** Packs a file the walk opened; false when it turned out not to be a lone regular file. */
async function addOpened(pack: tar.Pack, entry: Entry, opened: OpenedFile, name: string): Promise<boolean> {
  try {
    const stats = fstatSync(opened.fd);
    if (!stats.isFile() || stats.nlink !== 1) return false;
    const size = stats.size;
    const header = { mtime: stats.mtime, uid: 0, gid: 0, uname: "", gname: "", name, type: "file" as const, size, mode: stats.mode & 0o777 };
    let done!: Promise<void>;
    const sink = await new Promise<ReturnType<tar.Pack["entry"]>>((resolve) => {
      done = new Promise<void>((ok, ko) => resolve(pack.entry(header, (error) => (error ? ko(error) : ok()))));
    });
    let position = 0;
    while (position < size) {
      const want = Math.min(size - position, size <= SMALL_FILE_BYTES ? size : CHUNK_BYTES);
      const buffer = Buffer.allocUnsafe(want);
      let filled = 0;
      while (filled < want) {
        const n =
          size <= SMALL_FILE_BYTES
            ? readSync(opened.fd, buffer, filled, want - filled, position + filled)
            : await readAsync(opened.fd, buffer, filled, want - filled, position + filled);
        if (n === 0) break;
        filled += n;
      }
      if (filled < want) {
        sink.destroy(new Error(`${entry.path} changed while it was being snapshotted`));
        fail("CONTENT_CHANGED", `${entry.path} changed while it was being snapshotted`);
      }
      position += filled;
      if (!sink.write(buffer)) await new Promise<void>((resolve) => sink.once("drain", () => resolve()));
    }
    sink.end(undefined as never);
    await done;
    return true;
  } finally {
    await opened.close();
  }
}

function readAsync(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => read(fd, buffer, offset, length, position, (error, n) => (error ? reject(error) : resolve(n))));
}

/** Packs one regular file; false when it vanished or cannot be read safely (e.g. it has several hard links). */
async function addFile(pack: tar.Pack, workspace: Workspace, entry: Entry, name: string): Promise<boolean> {
  let file;
  try {
    file = await workspace.openFile(name.split("/"));
  } catch (error) {
    if (error instanceof FileToolsError) return false;
    throw error;
  }
  try {
    const size = file.size;
    let done!: Promise<void>;
    const sink = await new Promise<ReturnType<tar.Pack["entry"]>>((resolve) => {
      done = new Promise<void>((ok, ko) => {
        resolve(pack.entry({ ...common(file.entry), name, type: "file", size, mode: file.entry.mode & 0o777 }, (error) => (error ? ko(error) : ok())));
      });
    });
    let written = 0;
    for await (const chunk of file.chunks()) {
      const part = written + chunk.length > size ? chunk.subarray(0, size - written) : chunk;
      written += part.length;
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
    return true;
  } finally {
    await file.close();
  }
}
