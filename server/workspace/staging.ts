// A fresh staging directory inside a workspace, for extracting untrusted
// archives. Every member is created through directory descriptors we hold,
// opened with O_NOFOLLOW: a path can never pass through a symbolic link, and
// new files are created with O_EXCL, so nothing outside the staging
// directory can be touched. The staging directory carries a temp-file name:
// walks, listings and snapshots skip it, and the start-up sweep removes it.
// Calls are synchronous: an archive holds thousands of members, each a few
// cheap system calls, and an async thread-pool round trip per call made
// restores several times slower than GNU tar. A restore's files are written
// by the gzip workers that inflate them (StagingWriter, through
// Staging.lend), in parallel and off the main thread. Every entry takes the
// mtime its archive records (its atime: now, as GNU tar sets it); files
// through their descriptor after the last write, links without following
// them, and directories last of all (setDirectoryTimes), as creating an
// entry in a directory moves the directory's mtime.
import { chmodSync, closeSync, constants, fchmodSync, futimesSync, linkSync, lstatSync, lutimesSync, mkdirSync, openSync, promises as fsp, readlinkSync, symlinkSync, unlinkSync, writeSync } from "node:fs";
import { isUtf8 } from "node:buffer";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fail } from "../errors.js";
import { errnoOf } from "./errno.js";
import { at, self } from "./resolver.js";
import { removeContents } from "./remove.js";
import { bytesOfName, fsPath } from "./names.js";
import type { Directory } from "./directory.js";
import { statedEntry, type StatedEntry } from "./entry.js";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY } = constants;
const DIRECTORY_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

function unsafe(message: string): never {
  fail("UNSAFE_ARCHIVE", message);
}

/**
 * What a name is, for resolving a link's target without following it: a link
 * (its target; `fromRoot` when it was absolute and names the workspace root
 * or below), a directory, something else, nothing, or a link out of the workspace.
 */
export type TreeEntry =
  | { kind: "link"; target: string; fromRoot: boolean }
  | { kind: "directory" }
  | { kind: "other" }
  | { kind: "absent" }
  | { kind: "outside" };

export class Staging {
  private readonly writer: StagingWriter;
  /** Uses of the descriptor lent to worker threads, not yet settled (see lend). */
  private readonly lent = new Set<Promise<unknown>>();
  private closed = false;

  constructor(
    /** Name of the staging directory inside `parent`. */
    readonly name: string,
    /** The directory that holds the staging directory (the workspace root). */
    private readonly parent: Directory,
    /** The staging directory itself. */
    readonly dir: Directory,
  ) {
    this.writer = new StagingWriter(dir);
  }

  /**
   * Creates a directory (and its parents) with permission bits `mode`, the
   * owner's always among them (the daemon writes below it); an existing
   * directory (a parent a member before made) takes them too.
   */
  async mkdir(parts: readonly string[], mode: number): Promise<void> {
    const target = inside(this.writer.parentOf(parts), parts[parts.length - 1]!);
    try {
      mkdirSync(target, 0o700);
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") throw error;
      if (!lstatSync(target).isDirectory()) unsafe(`archive member ${parts.join("/")} is both a directory and something else`);
    }
    // Not left to mkdir's mode, which the umask narrows.
    chmodSync(target, (mode & 0o755) | 0o700);
  }

  /** Creates a regular file from `content`, with mtime `mtime` (seconds); a regular file of the same name is replaced. Returns its size. */
  async writeFile(parts: readonly string[], content: AsyncIterable<Uint8Array>, mode: number, mtime: number): Promise<number> {
    const fd = this.writer.createFile(parts);
    let size = 0;
    try {
      for await (const chunk of content) {
        let offset = 0;
        while (offset < chunk.length) offset += writeSync(fd, chunk, offset, chunk.length - offset);
        size += chunk.length;
      }
      fchmodSync(fd, mode & 0o777);
      futimesSync(fd, nowSeconds(), fileTime(mtime));
    } finally {
      closeSync(fd);
    }
    return size;
  }

  /** Like writeFile, for content already in memory. */
  async writeSmallFile(parts: readonly string[], content: Buffer, mode: number, mtime: number): Promise<void> {
    this.writer.writeFile(parts, content, mode, mtime);
  }

  /**
   * Lends the staging directory's descriptor to `use` (a worker thread of
   * this process writing into it with a StagingWriter of its own): it stays
   * open until `use` settles, and release and discard wait for every use
   * lent, so nothing is written into a staging directory once its caller
   * has been told the restore failed.
   */
  lend<T>(use: (fd: number) => Promise<T>): Promise<T> {
    const using = this.dir.onPool(use);
    const settled = using.then(
      () => undefined,
      () => undefined,
    );
    this.lent.add(settled);
    void settled.then(() => this.lent.delete(settled));
    return using;
  }

  /** Creates a symbolic link with mtime `mtime` (seconds; the caller has checked the target stays inside). */
  async symlink(parts: readonly string[], target: string, mtime: number): Promise<void> {
    const link = inside(this.writer.parentOf(parts), parts[parts.length - 1]!);
    try {
      symlinkSync(bytesOfName(target), link);
    } catch (error) {
      if (errnoOf(error) === "EEXIST") unsafe(`archive symbolic link ${parts.join("/")} collides with another member`);
      throw error;
    }
    lutimesSync(link, nowSeconds(), fileTime(mtime));
  }

  /**
   * Gives each directory its mtime (seconds), never through a link; called
   * once everything is staged, since creating an entry moves its directory's.
   */
  setDirectoryTimes(directories: Iterable<{ parts: readonly string[]; mtime: number }>): void {
    for (const { parts, mtime } of directories) lutimesSync(inside(this.writer.parentOf(parts), parts[parts.length - 1]!), nowSeconds(), fileTime(mtime));
  }

  /** Hard-links `parts` to the regular file `existing`, both inside the staging directory. */
  async link(parts: readonly string[], existing: readonly string[]): Promise<void> {
    const source = this.writer.openDir(existing.slice(0, -1));
    try {
      const sourcePath = inside(source, existing[existing.length - 1]!);
      let isFile = false;
      try {
        isFile = lstatSync(sourcePath).isFile();
      } catch {
        // absent: refused below
      }
      if (!isFile) unsafe(`archive hard link ${parts.join("/")} does not point at a regular file of the archive`);
      try {
        linkSync(sourcePath, inside(this.writer.parentOf(parts), parts[parts.length - 1]!));
      } catch (error) {
        if (errnoOf(error) === "EEXIST") unsafe(`archive hard link ${parts.join("/")} collides with another member`);
        throw error;
      }
    } finally {
      closeSync(source);
    }
  }

  /** The staging directory's path through its parent's descriptor (for a rename). */
  procPath(): string | Buffer {
    return at(this.parent, this.name);
  }

  /** Flushes everything written to the file system holding the staging directory (syncfs). */
  async sync(): Promise<void> {
    await promisify(execFile)("sync", ["-f", self(this.dir)]).catch(() => promisify(execFile)("sync", []));
  }

  /** Waits for the uses lent to workers, then closes cached descriptors (the staging directory stays). */
  async release(): Promise<void> {
    while (this.lent.size > 0) await Promise.all(this.lent);
    this.writer.close();
  }

  /** Deletes the staging directory and everything in it. */
  async discard(): Promise<void> {
    await this.release();
    if (this.closed) return;
    this.closed = true;
    await removeContents(this.dir).catch(() => undefined);
    this.dir.close();
    await fsp.rmdir(at(this.parent, this.name)).catch(() => undefined);
    this.parent.close();
  }

  /** Marks the staging directory as handed over (renamed elsewhere); closes the descriptors. */
  async handOver(): Promise<void> {
    await this.release();
    this.closed = true;
    this.dir.close();
    this.parent.close();
  }
}

/**
 * Creates entries below a staging directory held as a descriptor,
 * never through a symbolic link (directories opened with O_NOFOLLOW, files
 * created with O_EXCL|O_NOFOLLOW); the last parent opened is kept. The
 * Staging's own, and one per batch in a gzip worker (the descriptor lent
 * by Staging.lend: threads of one process share descriptors).
 */
export class StagingWriter {
  private cached: { key: string; fd: number } | null = null;

  /** `root.fd`: the staging directory's descriptor (a Directory's refuses use once closed). */
  constructor(private readonly root: { readonly fd: number }) {}

  /** Writes the regular file `parts` whole from `content`, with permission bits `mode` and mtime `mtime` (seconds). */
  writeFile(parts: readonly string[], content: Uint8Array, mode: number, mtime: number): void {
    const fd = this.createFile(parts);
    try {
      let offset = 0;
      while (offset < content.length) offset += writeSync(fd, content, offset, content.length - offset);
      fchmodSync(fd, mode & 0o777);
      futimesSync(fd, nowSeconds(), fileTime(mtime));
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Each entry below the staging root as an lstat gives it (null where there
   * is none): for a restore's listing of its staged tree. Looked up by the
   * root's host path as a whole while it is UTF-8 (through /proc/self/fd a
   * deep path cost 20 µs an lstat, 3 times this): no component of a staged tree is a link
   * (extract.ts), and what this returns is stats, never content.
   */
  lstatEach(entries: readonly (readonly string[])[]): (StatedEntry | null)[] {
    const host = readlinkSync(`/proc/self/fd/${this.root.fd}`, { encoding: "buffer" });
    const root = isUtf8(host) ? `${host.toString()}/` : `/proc/self/fd/${this.root.fd}/`;
    return entries.map((parts) => {
      try {
        return statedEntry(lstatSync(fsPath(root, parts.join("/")), { bigint: true }));
      } catch {
        return null;
      }
    });
  }

  /** Closes the cached parent. */
  close(): void {
    if (this.cached) closeSync(this.cached.fd);
    this.cached = null;
  }

  /** Creates the regular file `parts` (O_EXCL, never through a link), replacing a regular file of that name; returns its descriptor. */
  createFile(parts: readonly string[]): number {
    const target = inside(this.parentOf(parts), parts[parts.length - 1]!);
    const flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;
    try {
      return openSync(target, flags, 0o600);
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") throw error;
      if (!lstatSync(target).isFile()) unsafe(`archive member ${parts.join("/")} replaces a directory or link of the same name`);
      unlinkSync(target);
      return openSync(target, flags, 0o600);
    }
  }

  /** The open parent directory of `parts`, creating missing directories; cached for runs of members in one directory. */
  parentOf(parts: readonly string[]): number {
    if (parts.length === 0) unsafe("archive member names the extraction root");
    const key = parts.slice(0, -1).join("/");
    if (this.cached?.key === key) return this.cached.fd;
    const fd = this.openDir(parts.slice(0, -1), true);
    if (this.cached) closeSync(this.cached.fd);
    this.cached = { key, fd };
    return fd;
  }

  /** Opens a directory below the staging root, never through a symlink. */
  openDir(parts: readonly string[], create = false): number {
    let dir = openSync(`/proc/self/fd/${this.root.fd}`, O_RDONLY | O_DIRECTORY);
    for (const name of parts) {
      let next: number;
      try {
        try {
          next = openSync(inside(dir, name), DIRECTORY_FLAGS);
        } catch (error) {
          if (errnoOf(error) !== "ENOENT" || !create) throw error;
          try {
            mkdirSync(inside(dir, name), 0o755);
          } catch (e) {
            if (errnoOf(e) !== "EEXIST") throw e;
          }
          next = openSync(inside(dir, name), DIRECTORY_FLAGS);
        }
      } catch (error) {
        closeSync(dir);
        const code = errnoOf(error);
        if (code === "ELOOP" || code === "ENOTDIR") unsafe(`archive member ${parts.join("/")}/… goes through a symbolic link or a file`);
        if (code === "ENOENT") unsafe(`archive hard link points at ${parts.join("/")}, which is not in the archive`);
        throw error;
      }
      closeSync(dir);
      dir = next;
    }
    return dir;
  }
}

/** An atime for what a restore creates: now, as GNU tar gives it (a table of contents records no atime). */
function nowSeconds(): number {
  return Date.now() / 1000;
}

/**
 * An mtime (seconds since the epoch) as Node's utimes calls take it: a
 * negative number they take for now, and a Date only within its ±8.64e12 s
 * (past it an Invalid Date, EINVAL); a numeric string goes through as it is.
 */
export function fileTime(seconds: number): number | string {
  if (!Number.isFinite(seconds)) throw new RangeError(`not a time: ${seconds}`);
  return seconds < 0 ? String(seconds) : seconds;
}

/** `/proc/self/fd/N/name`: `name` (a held name, names.ts) inside the directory we hold as descriptor N. */
function inside(dirFd: number, name: string): string | Buffer {
  return fsPath(`/proc/self/fd/${dirFd}/`, name);
}


/**
 * What `parts` (components from the workspace root `root`, none of the
 * parents a link) names in the workspace as it is now, the link itself when
 * it is one. A parent that is missing or not a directory makes the name absent.
 */
export function existingEntry(root: Directory, parts: readonly string[]): TreeEntry {
  let dir: number;
  try {
    dir = openBelow(root, parts.slice(0, -1));
  } catch {
    return { kind: "absent" };
  }
  try {
    const target = inside(dir, parts[parts.length - 1]!);
    const stats = lstatSync(target, { throwIfNoEntry: false });
    if (!stats) return { kind: "absent" };
    if (stats.isDirectory()) return { kind: "directory" };
    if (!stats.isSymbolicLink()) return { kind: "other" };
    const link = readlinkSync(target);
    if (!link.startsWith("/")) return { kind: "link", target: link, fromRoot: false };
    const rootPath = readlinkSync(self(root));
    if (link === rootPath || link.startsWith(rootPath + "/")) return { kind: "link", target: link.slice(rootPath.length), fromRoot: true };
    return { kind: "outside" };
  } finally {
    closeSync(dir);
  }
}

/** Opens the directory `parts` below `root`, never through a symlink; throws when one is missing or not a directory. */
function openBelow(root: Directory, parts: readonly string[]): number {
  let dir = openSync(self(root), O_RDONLY | O_DIRECTORY);
  for (const name of parts) {
    try {
      const next = openSync(inside(dir, name), DIRECTORY_FLAGS);
      closeSync(dir);
      dir = next;
    } catch (error) {
      closeSync(dir);
      throw error;
    }
  }
  return dir;
}
