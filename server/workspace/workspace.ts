// One workspace: the only place where the file tools touch the file system.
// Every operation resolves its path through the Resolver (held directory
// descriptors, /proc/self/fd) and reports workspace paths only.
import { closeSync, constants, createReadStream, fstatSync, openSync, promises as fsp, readlinkSync } from "node:fs";
import type { BigIntStats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { fail, FileToolsError } from "../errors.js";
import { MAX_DEPTH, MAX_PATH_BYTES } from "./limits.js";
import { type Components, byteLengthOfPath, checkCreatable, displayPath, namesDirectory } from "./paths.js";
import { type Entry, entryFromStats, versionOf } from "./entry.js";
import { errnoOf, translateErrno } from "./errno.js";
import { Resolver, at, lstatOrNull, readLinkAt, self, type Location } from "./resolver.js";
import { OpenFile } from "./open-file.js";
import { Directory } from "./directory.js";
import { walk, walkFiles, type FileWalkOptions, type HeldBatch, type WalkEntry, type WalkOptions } from "./walk.js";
import { TEMP_FILE_PATTERN, tempFileName } from "./temp-files.js";
import { existingEntry, Staging, type TreeEntry } from "./staging.js";
import { removeContents, removeTree } from "./remove.js";
import { DepthFirst, HeldPath, readNames, treeFits } from "./tree.js";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_APPEND, O_NOFOLLOW, O_NONBLOCK } = constants;

const NEW_FILE_MODE = 0o644;
const NEW_DIRECTORY_MODE = 0o755;

export type WriteMode = "create-or-replace" | "create-only" | "replace-only";

export interface WriteOptions {
  createDirs: boolean;
  mode: WriteMode;
  /** When set, the current version must equal it (CONTENT_CHANGED otherwise). */
  ifVersion?: string;
}

export interface WriteResult {
  entry: Entry;
  created: boolean;
}

export class Workspace {
  private constructor(
    readonly id: string,
    readonly bound: boolean,
    readonly createdAt: Date,
    /** Owns the root directory's descriptor. */
    private readonly resolver: Resolver,
  ) {}

  /** Opens the workspace rooted at the host directory `hostDir` (never shown to clients). */
  static async open(id: string, hostDir: string, bound: boolean): Promise<Workspace> {
    const root = Directory.open(hostDir, true);
    try {
      // The real path of what we hold, read back through /proc: containment
      // depends on /proc/self/fd, so a daemon without it fails here, closed.
      const rootReal = readlinkSync(self(root));
      const stats = fstatSync(root.fd);
      return new Workspace(id, bound, stats.birthtime, new Resolver(root, rootReal));
    } catch (error) {
      root.close();
      throw error;
    }
  }

  /** Closes the root; later calls fail with CONTENT_CHANGED (calls under way keep the directories they opened). */
  close(): void {
    this.resolver.close();
  }

  /** Describes the entry itself (a symlink is reported as one). */
  async stat(parts: Components): Promise<Entry> {
    if (parts.length === 0) return entryFromStats("/", this.resolver.statRoot());
    const loc = await this.resolver.locate(parts);
    return withClosed(loc.dir, async () => {
      const stats = await lstatOrNull(at(loc.dir, loc.name), displayPath(parts));
      if (!stats) fail("NOT_FOUND", `${displayPath(parts)} does not exist`);
      if (namesDirectory(parts) && !stats.isDirectory()) fail("NOT_A_DIRECTORY", `${displayPath(parts)} is not a directory`);
      return entryFromStats(displayPath(parts), stats);
    });
  }

  /**
   * Opens a regular file for reading, following symlinks that stay inside.
   * Never blocks on a FIFO (O_NONBLOCK) and refuses anything but a regular file.
   */
  async openFile(parts: Components): Promise<OpenFile> {
    const shown = displayPath(parts);
    if (parts.length === 0) fail("IS_A_DIRECTORY", "/ is a directory");
    const loc = await this.resolver.locateFollowing(parts);
    if (!loc) fail("IS_A_DIRECTORY", `${shown} leads to the workspace root, a directory`);
    let fd: number;
    try {
      if (!loc.stats) fail("NOT_FOUND", `${shown} does not exist`);
      if (namesDirectory(parts) && !loc.stats.isDirectory()) fail("NOT_A_DIRECTORY", `${shown} is not a directory`);
      fd = openSync(at(loc.dir, loc.name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK); // synchronous: see lstatOrNull
    } catch (error) {
      throw translateErrno(error, shown);
    } finally {
      loc.dir.close();
    }
    try {
      const stats = fstatSync(fd, { bigint: true });
      assertRegularFile(stats, shown);
      assertSingleLink(stats, shown);
      this.resolver.assertInside({ fd }, shown);
      return new OpenFile(fd, entryFromStats(shown, stats));
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  /**
   * Writes a whole file atomically: a temp file in the same directory,
   * fsync, rename over the target, fsync of the directory. Replacing keeps the
   * permission bits; a symlink inside the workspace is written through.
   */
  async writeFile(parts: Components, content: Uint8Array | AsyncIterable<Uint8Array> | StagedFile, options: WriteOptions): Promise<WriteResult> {
    const shown = displayPath(parts);
    if (parts.length === 0) fail("IS_A_DIRECTORY", "/ is a directory");
    const loc = await this.resolver.locateFollowing(parts, options.createDirs);
    if (!loc) fail("IS_A_DIRECTORY", `${shown} leads to the workspace root, a directory`);
    return withClosed(loc.dir, async () => {
      const existing = loc.stats;
      assertFileTarget(parts, existing, shown);
      if (!existing) checkCreatable([...loc.dirParts, loc.name]);
      if (existing && options.mode === "create-only") fail("ALREADY_EXISTS", `${shown} already exists`);
      if (!existing && options.mode === "replace-only") fail("NOT_FOUND", `${shown} does not exist`);
      checkVersion(existing, options.ifVersion, shown);
      const permissions = existing ? Number(existing.mode & 0o7777n) : NEW_FILE_MODE;
      const temp = content instanceof StagedFile ? await content.moveInto(loc.dir, permissions, shown) : await writeTempFile(loc.dir, content, permissions, shown);
      try {
        if (options.mode === "create-only") {
          // link(2) fails on an existing name: no-clobber even against other processes.
          await fsp.link(at(loc.dir, temp), at(loc.dir, loc.name));
          await fsp.unlink(at(loc.dir, temp));
        } else {
          await fsp.rename(at(loc.dir, temp), at(loc.dir, loc.name));
        }
      } catch (error) {
        await fsp.unlink(at(loc.dir, temp)).catch(() => undefined);
        throw translateErrno(error, shown);
      }
      await loc.dir.sync();
      return { entry: await statAt(loc, shown), created: !existing };
    });
  }

  /**
   * Receives `content` into a temp file at the workspace root (hidden, swept
   * at start-up), for a writeFile later: a slow sender holds no lock while
   * its bytes arrive. `parts` only names the target in messages.
   */
  async stageFile(parts: Components, content: AsyncIterable<Uint8Array>): Promise<StagedFile> {
    const root = this.resolver.openRoot();
    try {
      return new StagedFile(root, await writeTempFile(root, content, 0o600, displayPath(parts)));
    } catch (error) {
      root.close();
      throw error;
    }
  }

  /**
   * Appends in place (O_APPEND, then fsync): bytes already in the file never
   * change. A missing file is created atomically like writeFile.
   */
  async appendFile(parts: Components, content: Uint8Array, options: Omit<WriteOptions, "mode">): Promise<WriteResult> {
    // Another process may create or remove the file between our look and our
    // write: each such race sends us round again (bounded), never to a wrong answer.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.appendOnce(parts, content, options);
      } catch (error) {
        if (!(error instanceof FileAppeared || error instanceof FileVanished)) throw error;
        if (attempt === APPEND_ATTEMPTS) fail("CONTENT_CHANGED", `${displayPath(parts)} kept being created and removed during the append; retry`);
      }
    }
  }

  private async appendOnce(parts: Components, content: Uint8Array, options: Omit<WriteOptions, "mode">): Promise<WriteResult> {
    const shown = displayPath(parts);
    if (parts.length === 0) fail("IS_A_DIRECTORY", "/ is a directory");
    const loc = await this.resolver.locateFollowing(parts, options.createDirs);
    if (!loc) fail("IS_A_DIRECTORY", `${shown} leads to the workspace root, a directory`);
    const existing = loc.stats;
    if (!existing) {
      loc.dir.close();
      try {
        return await this.writeFile(parts, content, { ...options, mode: "create-only" });
      } catch (error) {
        if (error instanceof FileToolsError && error.reason === "ALREADY_EXISTS") throw new FileAppeared();
        throw error;
      }
    }
    return withClosed(loc.dir, async () => {
      assertFileTarget(parts, existing, shown);
      checkVersion(existing, options.ifVersion, shown);
      const handle = await fsp.open(at(loc.dir, loc.name), O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK).catch((error: unknown) => {
        if (errnoOf(error) === "ENOENT") throw new FileVanished();
        throw translateErrno(error, shown);
      });
      await withClosed(handle, async () => {
        const stats = await handle.stat({ bigint: true });
        assertRegularFile(stats, shown);
        assertSingleLink(stats, shown);
        await writeAll(handle, content);
        await handle.sync();
      });
      return { entry: await statAt(loc, shown), created: false };
    });
  }

  /** Removes an entry (a symlink itself, never its target). Returns false when nothing was there. */
  async remove(parts: Components, options: { recursive: boolean; ifVersion?: string }): Promise<boolean> {
    const shown = displayPath(parts);
    if (parts.length === 0) fail("INVALID_PATH", "the workspace root cannot be deleted");
    const loc = await this.resolver.locate(parts).catch((error: unknown) => {
      if (error instanceof Error && "reason" in error && error.reason === "NOT_FOUND") return null;
      throw error;
    });
    if (!loc) return false;
    return withClosed(loc.dir, async () => {
      const stats = await lstatOrNull(at(loc.dir, loc.name), shown);
      if (!stats) return false;
      if (namesDirectory(parts) && !stats.isDirectory()) fail("NOT_A_DIRECTORY", `${shown} is not a directory`);
      checkVersion(stats, options.ifVersion, shown);
      try {
        if (stats.isDirectory()) {
          if (!options.recursive) fail("IS_A_DIRECTORY", `${shown} is a directory; set recursive to delete it`);
          await removeTree(loc.dir, loc.name);
        } else {
          await fsp.unlink(at(loc.dir, loc.name));
        }
      } catch (error) {
        throw translateErrno(error, shown);
      }
      await loc.dir.sync();
      return true;
    });
  }

  /** Renames an entry (a symlink moves as a link). */
  async move(source: Components, destination: Components, options: { overwrite: boolean; createDirs: boolean; ifVersion?: string }): Promise<Entry> {
    const from = displayPath(source);
    const to = displayPath(destination);
    if (source.length === 0) fail("INVALID_PATH", "the workspace root cannot be moved");
    if (destination.length === 0) fail("INVALID_PATH", "the destination names the workspace root");
    if (destination.length > source.length && source.every((part, i) => destination[i] === part)) {
      fail("INVALID_ARGUMENT", `cannot move ${from} into itself (${to})`);
    }
    const src = await this.resolver.locate(source);
    return withClosed(src.dir, async () => {
      const stats = await lstatOrNull(at(src.dir, src.name), from);
      if (!stats) fail("NOT_FOUND", `${from} does not exist`);
      if (namesDirectory(source) && !stats.isDirectory()) fail("NOT_A_DIRECTORY", `${from} is not a directory`);
      if (namesDirectory(destination) && !stats.isDirectory()) fail("NOT_A_DIRECTORY", `${to} names a directory but ${from} is not one`);
      checkVersion(stats, options.ifVersion, from);
      const dst = await this.resolver.locate(destination, options.createDirs);
      return withClosed(dst.dir, async () => {
        const present = await lstatOrNull(at(dst.dir, dst.name), to);
        if (present && !options.overwrite) fail("ALREADY_EXISTS", `${to} already exists; set overwrite to replace it`);
        if (present?.isDirectory() && !stats.isDirectory()) fail("IS_A_DIRECTORY", `${to} is a directory`);
        const target = [...dst.dirParts, dst.name];
        checkCreatable(target);
        if (stats.isDirectory()) await this.checkMovedTreeFits(src, [...src.dirParts, src.name], target, from, to);
        try {
          await fsp.rename(at(src.dir, src.name), at(dst.dir, dst.name));
        } catch (error) {
          // EINVAL: the destination is inside the source (reached through a link).
          if (errnoOf(error) === "EINVAL") fail("INVALID_ARGUMENT", `cannot move ${from} into itself (${to})`);
          throw translateErrno(error, to);
        }
        await src.dir.sync();
        await dst.dir.sync();
        return statAt(dst, to);
      });
    });
  }

  /** Creates a directory; false when it already existed. */
  async makeDir(parts: Components, options: { parents: boolean }): Promise<boolean> {
    const shown = displayPath(parts);
    if (parts.length === 0) return false;
    const loc = await this.resolver.locate(parts, options.parents);
    return withClosed(loc.dir, async () => {
      try {
        checkCreatable([...loc.dirParts, loc.name]);
        await fsp.mkdir(at(loc.dir, loc.name), NEW_DIRECTORY_MODE);
      } catch (error) {
        if (errnoOf(error) !== "EEXIST") throw translateErrno(error, shown);
        const stats = await lstatOrNull(at(loc.dir, loc.name), shown);
        if (stats?.isDirectory()) return false;
        fail("ALREADY_EXISTS", `${shown} exists and is not a directory`);
      }
      await loc.dir.sync();
      return true;
    });
  }

  /** Entries under a directory (symlinks never followed), in sorted walk order. */
  async *walk(parts: Components, options: WalkOptions): AsyncGenerator<WalkEntry> {
    const shown = displayPath(parts);
    const start = await this.openDirectory(parts, shown);
    yield* walk(start, parts, options, this.resolver);
  }

  /** Candidate files under a directory for the search workers, in batches in walk order (see walkFiles). */
  async *heldFiles(parts: Components, options: FileWalkOptions): AsyncGenerator<HeldBatch> {
    const start = await this.openDirectory(parts, displayPath(parts));
    yield* walkFiles(start, parts, options, this.resolver);
  }

  /** Deletes everything inside the workspace (its root stays). */
  async clear(): Promise<void> {
    const root = this.resolver.openRoot();
    await withClosed(root, () => removeContents(root));
  }

  /** The target of the symbolic link `parts` (never followed). */
  async readLink(parts: Components): Promise<string> {
    const shown = displayPath(parts);
    const loc = await this.resolver.locate(parts);
    return withClosed(loc.dir, async () => {
      try {
        return await readLinkAt(at(loc.dir, loc.name));
      } catch (error) {
        throw translateErrno(error, shown);
      }
    });
  }

  /** A fresh, empty staging directory inside the workspace (hidden from walks, swept at start-up). */
  async createStaging(): Promise<Staging> {
    const root = this.resolver.openRoot();
    const name = tempFileName();
    try {
      await fsp.mkdir(at(root, name), 0o700);
      return new Staging(name, root, Directory.open(at(root, name)));
    } catch (error) {
      root.close();
      throw translateErrno(error, "/");
    }
  }

  /**
   * Moves everything in `staging` into the directory `parts` (created when
   * missing): an entry of the same name is replaced, directories present on
   * both sides are merged. The staging directory is then removed.
   * `beforeMerge` sees the target's components from the root (links
   * resolved) and a view of the tree as it is, and may refuse the merge.
   */
  async mergeStaging(staging: Staging, parts: Components, beforeMerge: (into: string[], entryAt: (parts: readonly string[]) => TreeEntry) => Promise<void>): Promise<void> {
    const shown = displayPath(parts);
    await staging.release();
    let dest: Directory;
    try {
      // The archive was checked against the limits from its own root; below `parts` its paths are longer.
      const overflow = parts.length === 0 ? null : treeFits(Directory.open(self(staging.dir), true), { depth: MAX_DEPTH - parts.length, bytes: MAX_PATH_BYTES - byteLengthOfPath(parts) - 1 });
      if (overflow) fail("UNSAFE_ARCHIVE", `archive member ${displayPath(overflow.slice(0, 4)).slice(1)}/… would be past the limits of ${MAX_DEPTH} levels and ${MAX_PATH_BYTES} bytes below ${shown}`);
      if (parts.length === 0) {
        dest = this.resolver.openRoot();
      } else {
        await this.makeDir(parts, { parents: true });
        dest = await this.openDirectory(parts, shown);
      }
    } catch (error) {
      await staging.discard();
      throw error;
    }
    try {
      this.resolver.assertInside(dest, shown);
      const root = this.resolver.openRoot();
      try {
        const rootPath = readlinkSync(self(root));
        const destPath = readlinkSync(self(dest));
        const into = destPath === rootPath ? [] : destPath.slice(rootPath.length + 1).split("/");
        await beforeMerge(into, (at) => existingEntry(root, at));
      } finally {
        root.close();
      }
      await mergeInto(staging.dir, dest);
      await dest.sync();
    } finally {
      dest.close();
      await staging.discard();
    }
  }

  /**
   * Replaces the workspace's contents by the staging directory's, in place
   * (for bound workspaces, whose directory cannot be swapped): the old entries
   * move to a trash directory first, then the new ones move up. Not atomic.
   */
  async replaceContentsInPlace(staging: Staging): Promise<void> {
    await staging.release();
    const root = this.resolver.openRoot();
    const trashName = tempFileName();
    try {
      await fsp.mkdir(at(root, trashName), 0o700);
      const trash = Directory.open(at(root, trashName));
      try {
        for (const { name } of readNames(root)) {
          // Other calls' staging directories stay (they are temp-named too).
          if (name === trashName || TEMP_FILE_PATTERN.test(name)) continue;
          await fsp.rename(at(root, name), at(trash, name));
        }
        for (const { name } of readNames(staging.dir)) await fsp.rename(at(staging.dir, name), at(root, name));
        await root.sync();
        await removeContents(trash);
      } finally {
        trash.close();
      }
      await fsp.rmdir(at(root, trashName));
    } finally {
      root.close();
      await staging.discard();
    }
  }

  /** Removes temp files left by a crash (start-up sweep). Returns how many. */
  async sweepTempFiles(): Promise<number> {
    return sweep(this.resolver.openRoot());
  }

  /** Refuses a move of the directory `sourceParts` that would take something in it past the tree limits. */
  private async checkMovedTreeFits(src: Location, sourceParts: Components, target: Components, from: string, to: string): Promise<void> {
    // Only a move deeper or to a longer path can newly exceed them.
    const targetBytes = byteLengthOfPath(target);
    if (target.length <= sourceParts.length && targetBytes <= byteLengthOfPath(sourceParts)) return;
    const overflow = treeFits(Directory.open(at(src.dir, src.name)), { depth: MAX_DEPTH - target.length, bytes: MAX_PATH_BYTES - targetBytes - 1 });
    if (overflow) {
      fail("INVALID_PATH", `moving ${from} to ${to} would take ${displayPath([...target, ...overflow.slice(0, 4)])}/… past the limits of ${MAX_DEPTH} levels and ${MAX_PATH_BYTES} bytes`);
    }
  }

  private async openDirectory(parts: Components, shown: string): Promise<Directory> {
    if (parts.length === 0) return this.resolver.openRoot();
    const loc = await this.resolver.locateFollowing(parts);
    if (!loc) return this.resolver.openRoot();
    if (namesDirectory(parts) && loc.stats && !loc.stats.isDirectory()) {
      loc.dir.close();
      fail("NOT_A_DIRECTORY", `${shown} is not a directory`);
    }
    return withClosed(loc.dir, async () => {
      if (!loc.stats) fail("NOT_FOUND", `${shown} does not exist`);
      if (!loc.stats.isDirectory()) fail("NOT_A_DIRECTORY", `${shown} is not a directory`);
      try {
        return Directory.open(at(loc.dir, loc.name));
      } catch (error) {
        throw translateErrno(error, shown);
      }
    });
  }
}

async function withClosed<T>(handle: Directory | FileHandle, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } finally {
    await handle.close();
  }
}

async function statAt(loc: Location, shown: string): Promise<Entry> {
  const stats = await lstatOrNull(at(loc.dir, loc.name), shown);
  if (!stats) fail("NOT_FOUND", `${shown} vanished after it was written`);
  return entryFromStats(shown, stats);
}

function checkVersion(stats: BigIntStats | null, ifVersion: string | undefined, shown: string): void {
  if (!ifVersion) return;
  const current = stats ? versionOf(stats) : "";
  if (current !== ifVersion) {
    fail("CONTENT_CHANGED", `${shown} changed: its version is ${current || "(absent)"}, not ${ifVersion}`, { current_version: current });
  }
}

/** A file to write at `parts`: a regular file, or nothing yet; a path that ends in "/" names a directory, never a file. */
function assertFileTarget(parts: Components, existing: BigIntStats | null, shown: string): void {
  if (existing) assertRegularFile(existing, shown);
  if (namesDirectory(parts)) fail("NOT_A_DIRECTORY", `${shown} ends in "/", but a file is written there`);
}

const APPEND_ATTEMPTS = 5;
/** The file appeared between our look and a create-only write: append to it instead. */
class FileAppeared extends Error {}
/** The file vanished between our look and the open: create it instead. */
class FileVanished extends Error {}

function assertRegularFile(stats: BigIntStats, shown: string): void {
  if (stats.isDirectory()) fail("IS_A_DIRECTORY", `${shown} is a directory`);
  if (!stats.isFile()) fail("NOT_A_REGULAR_FILE", `${shown} is not a regular file (a FIFO, socket or device)`);
}

/**
 * A file with several hard links may share its inode with a path outside the
 * workspace (SPEC section 2): reading it or writing it in place is refused.
 * Replacing it by rename is safe: that replaces the name, not the shared inode.
 */
function assertSingleLink(stats: BigIntStats, shown: string): void {
  if (stats.nlink > 1n) {
    fail("PATH_ESCAPES_WORKSPACE", `${shown} has ${stats.nlink} hard links and may be shared with a file outside the workspace`);
  }
}

/** Bytes received by stageFile, waiting for writeFile to put them in place; discard() drops them unless they were. */
export class StagedFile {
  private placed = false;

  constructor(
    private readonly root: Directory,
    private readonly name: string,
  ) {}

  /** Moves the bytes into `dir` under a new temp name, with `permissions`; returns that name. */
  async moveInto(dir: Directory, permissions: number, shown: string): Promise<string> {
    const name = tempFileName();
    try {
      await fsp.rename(at(this.root, this.name), at(dir, name));
    } catch (error) {
      // A bound workspace may hold another file system below its root: copy across it.
      if (errnoOf(error) !== "EXDEV") throw translateErrno(error, shown);
      const copied = await writeTempFile(dir, createReadStream(at(this.root, this.name)), permissions, shown);
      await this.discard();
      return copied;
    }
    this.placed = true;
    try {
      await fsp.chmod(at(dir, name), permissions);
    } catch (error) {
      await fsp.unlink(at(dir, name)).catch(() => undefined);
      throw translateErrno(error, shown);
    }
    return name;
  }

  async discard(): Promise<void> {
    if (!this.placed) await fsp.unlink(at(this.root, this.name)).catch(() => undefined);
    this.placed = true;
    this.root.close();
  }
}

async function writeTempFile(dir: Directory, content: Uint8Array | AsyncIterable<Uint8Array>, permissions: number, shown: string): Promise<string> {
  const name = tempFileName();
  let handle: FileHandle;
  try {
    handle = await fsp.open(at(dir, name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  } catch (error) {
    throw translateErrno(error, shown);
  }
  try {
    if (content instanceof Uint8Array) await writeAll(handle, content);
    else for await (const chunk of content) await writeAll(handle, chunk);
    await handle.chmod(permissions);
    await handle.sync();
    await handle.close();
    return name;
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fsp.unlink(at(dir, name)).catch(() => undefined);
    throw translateErrno(error, shown);
  }
}

async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
    offset += bytesWritten;
  }
}

/** Removes the temp files and staging directories below `dir` (which it closes); iterative, see tree.ts. */
async function sweep(dir: Directory): Promise<number> {
  const path = new HeldPath(dir);
  let removed = 0;
  try {
    const walk = new DepthFirst(path);
    for (let step = walk.next(); step; step = walk.next()) {
      if ("left" in step) continue;
      const child = step.entry;
      if (child.kind === "directory" && TEMP_FILE_PATTERN.test(child.name)) {
        // a staging directory of an interrupted restore or import
        await removeTree(path.current(), child.name);
        removed++;
      } else if (child.kind === "directory") {
        walk.descend(child.name);
      } else if (child.kind === "file" && TEMP_FILE_PATTERN.test(child.name)) {
        await fsp.unlink(at(path.current(), child.name));
        removed++;
      }
    }
    return removed;
  } finally {
    path.close();
  }
}

/**
 * Moves every entry of `src` into `dst`, merging directories present on both
 * sides. Iterative, the two trees walked in step (tree.ts): any depth.
 */
async function mergeInto(src: Directory, dst: Directory): Promise<void> {
  const from = new HeldPath(Directory.open(self(src), true));
  const to = new HeldPath(Directory.open(self(dst), true));
  try {
    const walk = new DepthFirst(from);
    for (let step = walk.next(); step; step = walk.next()) {
      if ("left" in step) {
        to.leave();
        continue;
      }
      const child = step.entry;
      const present = await fsp.lstat(at(to.current(), child.name)).catch(() => null);
      if (child.kind === "directory" && present?.isDirectory() && to.enter(child.name)) {
        if (walk.descend(child.name)) continue;
        to.leave();
        continue; // gone from the staging tree: nothing to move
      }
      // A directory cannot be renamed over a file or link, nor a file over a directory: remove what is there first.
      if (present?.isDirectory()) await removeTree(to.current(), child.name);
      else if (present && child.kind === "directory") await fsp.unlink(at(to.current(), child.name));
      await fsp.rename(at(from.current(), child.name), at(to.current(), child.name));
    }
  } finally {
    from.close();
    to.close();
  }
}
