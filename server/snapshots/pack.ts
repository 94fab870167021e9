// Packs a workspace into a gzipped tarball, streamed: members in the walk's
// deterministic order (sorted names, a directory before its contents), no
// owner ids or names, symlinks stored as links (never followed), temp files
// excluded (the walk skips them), set-uid/set-gid bits dropped. Everything is
// read through the workspace module.
import { createGzip } from "node:zlib";
import { pipeline } from "node:stream";
import picomatch from "picomatch";
import tar from "tar-stream";
import { fail, FileToolsError } from "../errors.js";
import type { Workspace } from "../workspace/workspace.js";
import type { Entry } from "../workspace/entry.js";

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
  let matches: ((path: string) => boolean) | null = null;
  if (include.length > 0) {
    try {
      matches = picomatch([...include], { dot: true });
    } catch (error) {
      fail("INVALID_ARGUMENT", `invalid include glob: ${(error as Error).message}`);
    }
  }
  const pack = tar.pack();
  const gzip = createGzip({ level: 6 });
  const result = { fileCount: 0, bytes: gzip as AsyncIterable<Uint8Array> };
  pipeline(pack, gzip, () => undefined);

  const produce = async () => {
    const walk = workspace.walk([], { recursive: true, maxDepth: 0, includeHidden: true, respectGitignore: false });
    for await (const entry of walk) {
      options.signal?.throwIfAborted();
      const name = entry.path.slice(1);
      if (matches && entry.type !== "directory" && !matches(name)) continue;
      if (entry.type === "directory") {
        if (matches) continue;
        await addEntry(pack, { ...common(entry), name: name + "/", type: "directory", mode: entry.mode & 0o777 });
      } else if (entry.type === "symlink") {
        const linkname = await workspace.readLink(entry.path.slice(1).split("/")).catch(() => null);
        if (linkname === null) continue;
        await addEntry(pack, { ...common(entry), name, type: "symlink", linkname, mode: 0o777 });
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

function common(entry: Entry) {
  return { mtime: new Date(Number(entry.mtimeNs / 1_000_000n)), uid: 0, gid: 0, uname: "", gname: "" };
}

function addEntry(pack: tar.Pack, header: tar.Header | (Partial<tar.Header> & { name: string })): Promise<void> {
  return new Promise((resolve, reject) => {
    pack.entry(header, (error) => (error ? reject(error) : resolve()));
  });
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
