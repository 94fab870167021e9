// A fresh staging directory inside a workspace, for extracting untrusted
// archives. Every member is created through directory descriptors we hold,
// opened with O_NOFOLLOW: a path can never pass through a symbolic link, and
// new files are created with O_EXCL, so nothing outside the staging
// directory can be touched. The staging directory carries a temp-file name:
// walks, listings and snapshots skip it, and the start-up sweep removes it.
import { closeSync, constants, fchmodSync, lstatSync, openSync, promises as fsp, unlinkSync, writeSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fail, FileToolsError } from "../errors.js";
import { errnoOf } from "./errno.js";
import { at, self } from "./resolver.js";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY } = constants;
const DIRECTORY_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

function unsafe(message: string): never {
  fail("UNSAFE_ARCHIVE", message);
}

export class Staging {
  private cached: { key: string; dir: FileHandle } | null = null;
  private closed = false;

  constructor(
    /** Name of the staging directory inside `parent`. */
    readonly name: string,
    /** The directory that holds the staging directory (the workspace root). */
    private readonly parent: FileHandle,
    /** The staging directory itself. */
    readonly dir: FileHandle,
  ) {}

  /** Creates a directory (and its parents); an existing directory is fine. */
  async mkdir(parts: readonly string[]): Promise<void> {
    const parent = await this.parentOf(parts);
    const name = parts[parts.length - 1]!;
    try {
      await fsp.mkdir(at(parent, name), 0o755);
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") throw error;
      const stats = await fsp.lstat(at(parent, name));
      if (!stats.isDirectory()) unsafe(`archive member ${parts.join("/")} is both a directory and something else`);
    }
  }

  /** Creates a regular file from `content`; a regular file of the same name is replaced. Returns its size. */
  async writeFile(parts: readonly string[], content: AsyncIterable<Uint8Array>, mode: number): Promise<number> {
    const parent = await this.parentOf(parts);
    const name = parts[parts.length - 1]!;
    let handle: FileHandle;
    try {
      handle = await fsp.open(at(parent, name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") throw error;
      const stats = await fsp.lstat(at(parent, name));
      if (!stats.isFile()) unsafe(`archive member ${parts.join("/")} replaces a directory or link of the same name`);
      await fsp.unlink(at(parent, name));
      handle = await fsp.open(at(parent, name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    }
    let size = 0;
    try {
      for await (const chunk of content) {
        let offset = 0;
        while (offset < chunk.length) offset += (await handle.write(chunk, offset, chunk.length - offset)).bytesWritten;
        size += chunk.length;
      }
      await handle.chmod(mode & 0o777);
    } finally {
      await handle.close();
    }
    return size;
  }

  /**
   * Like writeFile for content already in memory, with synchronous calls:
   * for the many small files of an archive, several times cheaper than
   * async round trips to the thread pool.
   */
  async writeSmallFile(parts: readonly string[], content: Buffer, mode: number): Promise<void> {
    const parent = await this.parentOf(parts);
    const target = at(parent, parts[parts.length - 1]!);
    const flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;
    let fd: number;
    try {
      fd = openSync(target, flags, 0o600);
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") throw error;
      if (!lstatSync(target).isFile()) unsafe(`archive member ${parts.join("/")} replaces a directory or link of the same name`);
      unlinkSync(target);
      fd = openSync(target, flags, 0o600);
    }
    try {
      let offset = 0;
      while (offset < content.length) offset += writeSync(fd, content, offset, content.length - offset);
      fchmodSync(fd, mode & 0o777);
    } finally {
      closeSync(fd);
    }
  }

  /** Creates a symbolic link (the caller has checked the target stays inside). */
  async symlink(parts: readonly string[], target: string): Promise<void> {
    const parent = await this.parentOf(parts);
    try {
      await fsp.symlink(target, at(parent, parts[parts.length - 1]!));
    } catch (error) {
      if (errnoOf(error) === "EEXIST") unsafe(`archive symbolic link ${parts.join("/")} collides with another member`);
      throw error;
    }
  }

  /** Hard-links `parts` to the regular file `existing`, both inside the staging directory. */
  async link(parts: readonly string[], existing: readonly string[]): Promise<void> {
    const source = await this.openDir(existing.slice(0, -1));
    try {
      const sourceName = existing[existing.length - 1]!;
      const stats = await fsp.lstat(at(source, sourceName)).catch(() => null);
      if (!stats?.isFile()) unsafe(`archive hard link ${parts.join("/")} does not point at a regular file of the archive`);
      const parent = await this.parentOf(parts);
      try {
        await fsp.link(at(source, sourceName), at(parent, parts[parts.length - 1]!));
      } catch (error) {
        if (errnoOf(error) === "EEXIST") unsafe(`archive hard link ${parts.join("/")} collides with another member`);
        throw error;
      }
    } finally {
      await source.close();
    }
  }

  /** The staging directory's path through its parent's descriptor (for a rename). */
  procPath(): string {
    return at(this.parent, this.name);
  }

  /** Flushes everything written to the file system holding the staging directory (syncfs). */
  async sync(): Promise<void> {
    await promisify(execFile)("sync", ["-f", self(this.dir)]).catch(() => promisify(execFile)("sync", []));
  }

  /** Closes cached descriptors (the staging directory stays). */
  async release(): Promise<void> {
    if (this.cached) await this.cached.dir.close();
    this.cached = null;
  }

  /** Deletes the staging directory and everything in it. */
  async discard(): Promise<void> {
    await this.release();
    if (this.closed) return;
    this.closed = true;
    await removeContents(this.dir).catch(() => undefined);
    await this.dir.close().catch(() => undefined);
    await fsp.rmdir(at(this.parent, this.name)).catch(() => undefined);
    await this.parent.close().catch(() => undefined);
  }

  /** Marks the staging directory as handed over (renamed elsewhere); closes the descriptors. */
  async handOver(): Promise<void> {
    await this.release();
    this.closed = true;
    await this.dir.close().catch(() => undefined);
    await this.parent.close().catch(() => undefined);
  }

  /** The open parent directory of `parts`, creating missing directories; cached for runs of members in one directory. */
  private async parentOf(parts: readonly string[]): Promise<FileHandle> {
    if (parts.length === 0) unsafe("archive member names the extraction root");
    const key = parts.slice(0, -1).join("/");
    if (this.cached?.key === key) return this.cached.dir;
    const dir = await this.openDir(parts.slice(0, -1), true);
    if (this.cached) await this.cached.dir.close();
    this.cached = { key, dir };
    return dir;
  }

  /** Opens a directory below the staging root, never through a symlink. */
  private async openDir(parts: readonly string[], create = false): Promise<FileHandle> {
    let dir = await fsp.open(self(this.dir), O_RDONLY | O_DIRECTORY);
    for (const name of parts) {
      let next: FileHandle;
      try {
        try {
          next = await fsp.open(at(dir, name), DIRECTORY_FLAGS);
        } catch (error) {
          if (errnoOf(error) !== "ENOENT" || !create) throw error;
          await fsp.mkdir(at(dir, name), 0o755).catch((e: unknown) => {
            if (errnoOf(e) !== "EEXIST") throw e;
          });
          next = await fsp.open(at(dir, name), DIRECTORY_FLAGS);
        }
      } catch (error) {
        await dir.close();
        const code = errnoOf(error);
        if (code === "ELOOP" || code === "ENOTDIR") unsafe(`archive member ${parts.join("/")}/… goes through a symbolic link or a file`);
        if (code === "ENOENT") unsafe(`archive hard link points at ${parts.join("/")}, which is not in the archive`);
        throw error instanceof FileToolsError ? error : error;
      }
      await dir.close();
      dir = next;
    }
    return dir;
  }
}

/** Deletes everything inside an open directory, through held descriptors, never through symlinks. */
export async function removeContents(dir: FileHandle): Promise<void> {
  for (const child of await fsp.readdir(self(dir), { withFileTypes: true })) {
    if (child.isDirectory()) {
      const sub = await fsp.open(at(dir, child.name), DIRECTORY_FLAGS);
      try {
        await removeContents(sub);
      } finally {
        await sub.close();
      }
      await fsp.rmdir(at(dir, child.name));
    } else {
      await fsp.unlink(at(dir, child.name));
    }
  }
}
