// One workspace: the only place where the file tools touch the file system.
// Every operation resolves its path through the Resolver (held directory
// descriptors, /proc/self/fd) and reports workspace paths only.
import { closeSync, constants, createReadStream, fchmodSync, fstatSync, lstatSync, openSync, promises as fsp, readlinkSync, rmdirSync } from "node:fs";
import type { BigIntStats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { fail, FileToolsError } from "../errors.js";
import { MAX_DEPTH, MAX_PATH_BYTES } from "./limits.js";
import { type Components, byteLengthOfPath, checkCreatable, displayPath, namesDirectory } from "./paths.js";
import { type Entry, entryFromStats, versionOf } from "./entry.js";
import { errnoOf, translateErrno } from "./errno.js";
import { Resolver, at, lstatOrNull, readLinkAt, self, type FollowedLocation, type Location, type MadeDirectories } from "./resolver.js";
import { measureTree, negateUsage, NO_USAGE, type Admission, type Usage, type UsageGate } from "./usage.js";
import { OpenFile } from "./open-file.js";
import { Directory } from "./directory.js";
import { walk, walkFiles, type FileWalkOptions, type HeldBatch, type WalkEntry, type WalkOptions } from "./walk.js";
import { TEMP_FILE_PATTERN, tempFileName } from "./temp-files.js";
import { existingEntry, fileTime, Staging, type TreeEntry } from "./staging.js";
import { removeContents, removeTree } from "./remove.js";
import { DepthFirst, HeldPath, readNames, treeFits } from "./tree.js";
import type { OutsideEvent, OutsideSubscription } from "./outside.js";

export type { MadeDirectories } from "./resolver.js";

/** Where a change took effect, links resolved (`from`: a move's source); the paths asked may go through links to directories. */
export interface Landed {
  parts?: Components;
  from?: Components;
}

/** Where a staged tree was merged (mergeStaging): the directories made on the way to it, and its directory's components, links resolved. */
export interface MergedInto {
  madeDirectories: MadeDirectories;
  landed: Components;
}

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_APPEND, O_NOFOLLOW, O_NONBLOCK } = constants;

const NEW_FILE_MODE = 0o644;
/** Opens of a file whose name is replaced between its lstat and its open, before openFile gives up. */
const OPEN_ATTEMPTS = 3;
const NEW_DIRECTORY_MODE = 0o755;
/** rmdir(2)'s errors for a directory removeEmptyDirectory leaves: not empty (EEXIST on some systems), not a directory, gone. */
const LEFT_BY_RMDIR = new Set(["ENOTEMPTY", "EEXIST", "ENOTDIR", "ENOENT"]);

export type WriteMode = "create-or-replace" | "create-only" | "replace-only";

export interface WriteOptions {
  createDirs: boolean;
  mode: WriteMode;
  /** When set, the current version must equal it (CONTENT_CHANGED otherwise). */
  ifVersion?: string;
  /** Admits what the write adds before anything is written (a quota), and is told what it did. */
  gate?: UsageGate;
  /**
   * Runs once the file is in place (renamed over the target, its entry read),
   * alongside the fsync of its directory rather than after it: a journal's
   * own durable append, whose sync the file system can then commit with the
   * directory's. Its failure fails the write (the file stays written).
   */
  whilePlacing?: (result: WriteResult) => Promise<void>;
  /** Receives the directories the write made (createDirs), parents first, even when it then fails: for a change that may be undone. */
  madeDirectories?: MadeDirectories;
}

export interface WriteResult {
  entry: Entry;
  created: boolean;
  /** The version of what was replaced ("" when the file was created). */
  versionBefore: string;
  /** The directories the write made on its way (createDirs), parents first: a journal tells them before the file. */
  madeDirectories: MadeDirectories;
}

export class Workspace {
  /**
   * Changes to the tree begun through this object, and how many are under
   * way (closing counts as one: the registry swaps a managed directory, then
   * closes the old object). A managed tree changes only through the daemon,
   * so a walk taken while none was under way still describes it while none
   * has begun since (changeMark, changedSince).
   */
  private readonly changes = { begun: 0, underWay: 0, unrecorded: 0 };

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
    this.changes.begun++;
    this.resolver.close();
  }

  /** The count of changes begun, taken while none is under way; undefined while one is. */
  changeMark(): number | undefined {
    return this.changes.underWay === 0 ? this.changes.begun : undefined;
  }

  /**
   * Runs a tool's change together with its journal record: until both are
   * done, quietMark is undefined. A change whose record is made after it
   * returns (Delete, Move, MakeDir, ApplyPatch; a write records while it is
   * placed) would otherwise look finished, its record not in yet.
   */
  async recorded<T>(changeAndRecord: () => Promise<T>): Promise<T> {
    this.changes.unrecorded++;
    try {
      return await changeAndRecord();
    } finally {
      this.changes.unrecorded--;
    }
  }

  /** changeMark, and undefined too while a change's record is not in yet (recorded): a look at the tree taken while it stays the same saw no change of the daemon's own half done. */
  quietMark(): number | undefined {
    return this.changes.unrecorded === 0 ? this.changeMark() : undefined;
  }

  /** Whether a change to the tree began through this object after `mark` was taken. */
  changedSince(mark: number): boolean {
    return this.changesSince(mark) !== 0;
  }

  /** How many changes to the tree began through this object after `mark` was taken. */
  changesSince(mark: number): number {
    return this.changes.begun - mark;
  }

  /**
   * Runs a change to the tree, counted (see `changes`). `alone` says whether
   * no other change overlapped this one so far (none under way when it began,
   * none begun since): only then may a failed change take back directories it
   * made (unmake), which another call may otherwise have found and relied on.
   */
  private async changing<T>(change: (alone: () => boolean) => Promise<T>): Promise<T> {
    const begun = ++this.changes.begun;
    const first = ++this.changes.underWay === 1;
    try {
      return await change(() => first && this.changes.begun === begun);
    } finally {
      this.changes.underWay--;
    }
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
    for (let attempt = 1; ; attempt++) {
      const loc = await this.resolver.locateFollowing(parts);
      if (!loc) fail("IS_A_DIRECTORY", `${shown} leads to the workspace root, a directory`);
      let opened: { fd: number; found: BigIntStats };
      try {
        if (!loc.stats) fail("NOT_FOUND", `${shown} does not exist`);
        if (namesDirectory(parts) && !loc.stats.isDirectory()) fail("NOT_A_DIRECTORY", `${shown} is not a directory`);
        opened = { fd: openSync(at(loc.dir, loc.name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK), found: loc.stats }; // synchronous: see lstatOrNull
      } catch (error) {
        throw translateErrno(error, shown);
      } finally {
        loc.dir.close();
      }
      const { fd, found } = opened;
      try {
        const stats = fstatSync(fd, { bigint: true });
        assertRegularFile(stats, shown);
        assertSingleLink(stats, shown);
        // Only the inode the lstat found, with one link: the descriptor's own count misses a hard
        // link to an outside file whose name here was removed before the fstat (held-open.ts).
        if (stats.dev === found.dev && stats.ino === found.ino) {
          assertSingleLink(found, shown);
          this.resolver.assertInside({ fd }, shown);
          return new OpenFile(fd, entryFromStats(shown, stats));
        }
      } catch (error) {
        closeSync(fd);
        throw error;
      }
      closeSync(fd);
      // Replaced between the lstat and the open (an editor's save): looked up again.
      if (attempt === OPEN_ATTEMPTS) fail("CONTENT_CHANGED", `${shown} was replaced each time it was opened; retry`);
    }
  }

  /**
   * Writes a whole file atomically: a temp file in the same directory,
   * fsync, rename over the target, fsync of the directory. Replacing keeps the
   * permission bits; a symlink inside the workspace is written through.
   */
  async writeFile(parts: Components, content: Uint8Array | StagedFile, options: WriteOptions): Promise<WriteResult> {
    return this.changing(async (alone) => {
      const shown = displayPath(parts);
      if (parts.length === 0) fail("IS_A_DIRECTORY", "/ is a directory");
      const size = content instanceof StagedFile ? content.size : content.length;
      const made: MadeDirectories = [];
      let written = NO_USAGE;
      let admission: Admission | undefined;
      try {
        let loc: FollowedLocation;
        ({ loc, admission } = await this.locateToWrite(parts, options, made, alone, (existing) => ({
          bytes: size - sizeOfFile(existing),
          entries: existing ? 0 : 1,
        })));
        const result = await this.writeLocated(parts, loc, content, options, shown, made);
        written = { bytes: size - sizeOfFile(loc!.stats), entries: result.created ? 1 : 0 };
        return result;
      } catch (error) {
        await this.unmake(made, alone);
        throw error;
      } finally {
        admission?.settle({ bytes: written.bytes, entries: written.entries + made.length });
        options.madeDirectories?.push(...made);
      }
    });
  }

  /**
   * Locates the file `parts` for a write. With a gate, what the write adds
   * (`added`, given what is there now, plus the parents it would make) is
   * admitted first: a refusal makes nothing, not even a parent directory.
   */
  private async locateToWrite(
    parts: Components,
    options: WriteOptions,
    made: MadeDirectories,
    alone: () => boolean,
    added: (existing: BigIntStats | null) => Usage,
  ): Promise<{ loc: FollowedLocation; admission?: Admission }> {
    const { gate } = options;
    if (!gate) return { loc: await this.resolver.locateFollowing(parts, options.createDirs, made) };
    let loc: FollowedLocation;
    try {
      loc = await this.resolver.locateFollowing(parts);
    } catch (error) {
      if (!options.createDirs || !(error instanceof FileToolsError && error.reason === "NOT_FOUND")) throw error;
      const missing = await this.resolver.missingParents(parts);
      const admission = gate.admit({ ...added(null), entries: added(null).entries + missing }, displayPath(parts));
      try {
        return { loc: await this.resolver.locateFollowing(parts, true, made), admission };
      } catch (locateError) {
        await this.unmake(made, alone);
        admission.settle({ bytes: 0, entries: made.length });
        throw locateError;
      }
    }
    if (!loc) return { loc };
    try {
      return { loc, admission: gate.admit(added(loc.stats), displayPath(parts)) };
    } catch (error) {
      loc.dir.close();
      throw error;
    }
  }

  private async writeLocated(
    parts: Components,
    loc: FollowedLocation,
    content: Uint8Array | StagedFile,
    options: WriteOptions,
    shown: string,
    made: MadeDirectories,
  ): Promise<WriteResult> {
    if (!loc) fail("IS_A_DIRECTORY", `${shown} leads to the workspace root, a directory`);
    return withClosed(loc.dir, async () => {
      const existing = loc.stats;
      assertFileTarget(parts, existing, shown);
      if (!existing) checkCreatable([...loc.dirParts, loc.name]);
      if (existing && options.mode === "create-only") fail("ALREADY_EXISTS", `${shown} already exists`);
      if (!existing && options.mode === "replace-only") fail("NOT_FOUND", `${shown} does not exist`);
      checkVersion(existing, options.ifVersion, shown);
      const permissions = existing ? Number(existing.mode & 0o7777n) : NEW_FILE_MODE;
      const createOnly = options.mode === "create-only";
      if (content instanceof StagedFile) {
        await content.placeAt(loc.dir, loc.name, permissions, createOnly, shown);
      } else {
        await placeTempFile(loc.dir, await writeTempFile(loc.dir, content, permissions, shown), loc.name, createOnly, shown);
      }
      const result = { entry: await statAt(loc, shown), created: !existing, versionBefore: existing ? versionOf(existing) : "", madeDirectories: [...made] };
      await both(loc.dir.sync(), options.whilePlacing?.(result));
      return result;
    });
  }

  /**
   * Receives `content` into a temp file at the workspace root (hidden, swept
   * at start-up), for a writeFile later: a slow sender holds no lock while
   * its bytes arrive. `parts` only names the target in messages.
   */
  async stageFile(parts: Components, content: Uint8Array | AsyncIterable<Uint8Array>): Promise<StagedFile> {
    const root = this.resolver.openRoot();
    try {
      const name = await writeTempFile(root, content, 0o600, displayPath(parts));
      return new StagedFile(root, name, lstatSync(at(root, name)).size);
    } catch (error) {
      root.close();
      throw error;
    }
  }

  /**
   * stageFile for bytes in hand, its name made durable too (the root's
   * fsync): a journal may name it to finish a change after a crash.
   */
  async stageDurably(parts: Components, content: Uint8Array): Promise<StagedFile> {
    const staged = await this.stageFile(parts, content);
    await staged.syncName();
    return staged;
  }

  /** A file stageFile received before a restart, by the name it had, or undefined when it is gone (placed, or never durable). */
  async adoptStagedFile(name: string): Promise<StagedFile | undefined> {
    if (!TEMP_FILE_PATTERN.test(name)) return undefined;
    const root = this.resolver.openRoot();
    const stats = await lstatOrNull(at(root, name), name).catch(() => null);
    if (!stats?.isFile()) {
      root.close();
      return undefined;
    }
    return new StagedFile(root, name, Number(stats.size));
  }

  /**
   * Appends in place (O_APPEND, then fsync): bytes already in the file never
   * change. A missing file is created atomically like writeFile.
   */
  async appendFile(parts: Components, content: Uint8Array, options: Omit<WriteOptions, "mode">): Promise<WriteResult> {
    return this.changing(async () => {
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
    });
  }

  private async appendOnce(parts: Components, content: Uint8Array, options: Omit<WriteOptions, "mode">): Promise<WriteResult> {
    const shown = displayPath(parts);
    if (parts.length === 0) fail("IS_A_DIRECTORY", "/ is a directory");
    // Without createDirs here: a missing file (and its parents) is made by writeFile, whose gate counts them first.
    const loc = await this.resolver.locateFollowing(parts).catch((error: unknown) => {
      if (error instanceof FileToolsError && error.reason === "NOT_FOUND") return "missing" as const;
      throw error;
    });
    if (!loc) fail("IS_A_DIRECTORY", `${shown} leads to the workspace root, a directory`);
    const existing = loc === "missing" ? null : loc.stats;
    if (loc === "missing" || !existing) {
      if (loc !== "missing") loc.dir.close();
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
      const admission = options.gate?.admit({ bytes: content.length, entries: 0 }, shown);
      let appended = 0;
      try {
        await appendTo(loc, content, shown);
        appended = content.length;
      } finally {
        admission?.settle({ bytes: appended, entries: 0 });
      }
      return { entry: await statAt(loc, shown), created: false, versionBefore: versionOf(existing), madeDirectories: [] };
    });
  }

  /** Removes an entry (a symlink itself, never its target). Returns false when nothing was there; `landed` receives where it was removed. */
  async remove(parts: Components, options: { recursive: boolean; ifVersion?: string; gate?: UsageGate; landed?: Landed }): Promise<boolean> {
    return this.changing(async () => {
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
        if (stats.isDirectory() && !options.recursive) fail("IS_A_DIRECTORY", `${shown} is a directory; set recursive to delete it`);
        // What goes, counted before it goes (a subtree: the walk the removal makes anyway, once more).
        const freed = options.gate ? (stats.isDirectory() ? await entryAndTree(loc, shown) : usageOfEntry(stats)) : NO_USAGE;
        try {
          if (stats.isDirectory()) await removeTree(loc.dir, loc.name);
          else await fsp.unlink(at(loc.dir, loc.name));
        } catch (error) {
          // Part of a subtree may be gone: count the workspace again rather than guess.
          if (stats.isDirectory()) options.gate?.recount();
          throw translateErrno(error, shown);
        }
        options.gate?.admit(negateUsage(freed), shown).settle(negateUsage(freed));
        if (options.landed) options.landed.parts = [...loc.dirParts, loc.name];
        await loc.dir.sync();
        return true;
      });
    });
  }

  /**
   * Removes the directory at `parts` while it is empty (rmdir(2): never one
   * holding an entry, whoever put it there). Returns false when it was left:
   * not empty, not a directory (nor below one), gone, or `alone` said no
   * (asked just before the rmdir: see rmdirIfEmpty).
   */
  async removeEmptyDirectory(parts: Components, alone?: () => boolean): Promise<boolean> {
    return this.changing(() => this.rmdirIfEmpty(parts, alone));
  }

  /** `alone`, when given, is asked just before the rmdir (synchronous, so that no call can begin in between): false leaves the directory. */
  private async rmdirIfEmpty(parts: Components, alone?: () => boolean): Promise<boolean> {
    const shown = displayPath(parts);
    if (parts.length === 0) fail("INVALID_PATH", "the workspace root cannot be deleted");
    const loc = await this.resolver.locate(parts).catch((error: unknown) => {
      if (error instanceof FileToolsError && (error.reason === "NOT_FOUND" || error.reason === "NOT_A_DIRECTORY")) return null;
      throw error;
    });
    if (!loc) return false;
    return withClosed(loc.dir, async () => {
      try {
        if (alone && !alone()) return false;
        if (alone) rmdirSync(at(loc.dir, loc.name));
        else await fsp.rmdir(at(loc.dir, loc.name));
      } catch (error) {
        if (LEFT_BY_RMDIR.has(errnoOf(error) ?? "")) return false;
        throw translateErrno(error, shown);
      }
      await loc.dir.sync();
      return true;
    });
  }

  /**
   * After a change that failed: removes the directories it made (`made`,
   * parents first), deepest first, while empty, and takes them off the list.
   * A failed call leaves the tree as it was; one that something else has put
   * an entry in since stays, with those above it. Never fails the call further.
   */
  private async unmake(made: MadeDirectories, alone: () => boolean): Promise<void> {
    // Only while no other call overlapped this one: another may have found them (a makeDir told "already existed", a write located in one).
    while (made.length > 0 && (await this.rmdirIfEmpty(made[made.length - 1]!.parts, alone).catch(() => false))) made.pop();
  }

  /**
   * Takes the file (or symlink) at `parts` out of the tree under a temp name
   * beside it (never listed or snapshotted, swept at start-up), for a change
   * that may have to put it back: ApplyPatch's removals, undone when a later
   * step of the patch fails. Undefined when nothing is there.
   */
  async setAside(parts: Components): Promise<SetAsideFile | undefined> {
    return this.changing(async () => {
      const shown = displayPath(parts);
      if (parts.length === 0) fail("INVALID_PATH", "the workspace root cannot be deleted");
      const loc = await this.resolver.locate(parts).catch((error: unknown) => {
        if (error instanceof FileToolsError && error.reason === "NOT_FOUND") return null;
        throw error;
      });
      if (!loc) return undefined;
      try {
        const stats = await lstatOrNull(at(loc.dir, loc.name), shown);
        if (!stats) {
          loc.dir.close();
          return undefined;
        }
        if (stats.isDirectory()) fail("IS_A_DIRECTORY", `${shown} is a directory`);
        const temp = tempFileName();
        await fsp.rename(at(loc.dir, loc.name), at(loc.dir, temp)).catch((error: unknown) => {
          throw translateErrno(error, shown);
        });
        await loc.dir.sync();
        return new SetAsideFile(loc.dir, loc.name, temp, shown, (change) => this.changing(change));
      } catch (error) {
        loc.dir.close();
        throw error;
      }
    });
  }

  /**
   * Renames an entry (a symlink moves as a link); `madeDirectories` receives those made on the way to the destination (createDirs),
   * parents first, even when it then fails; `landed`, where it was moved from and to.
   */
  async move(
    source: Components,
    destination: Components,
    options: { overwrite: boolean; createDirs: boolean; ifVersion?: string; gate?: UsageGate; madeDirectories?: MadeDirectories; landed?: Landed },
  ): Promise<Entry> {
    return this.changing(async (alone) => {
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
        // A move adds nothing but the parents it makes (what it replaces is freed): those are admitted first.
        const missing = options.gate && options.createDirs ? await this.resolver.missingParents(destination) : 0;
        const admission = options.gate?.admit({ bytes: 0, entries: missing }, to);
        const made: MadeDirectories = [];
        let replaced = NO_USAGE;
        try {
          const dst = await this.resolver.locate(destination, options.createDirs, made);
          return await withClosed(dst.dir, async () => {
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
            // rename(2) replaces a file, a link or an empty directory: one entry, and a file's bytes.
            if (present) replaced = usageOfEntry(present);
            if (options.landed) Object.assign(options.landed, { parts: target, from: [...src.dirParts, src.name] });
            await src.dir.sync();
            await dst.dir.sync();
            return statAt(dst, to);
          });
        } catch (error) {
          await this.unmake(made, alone);
          throw error;
        } finally {
          admission?.settle({ bytes: -replaced.bytes, entries: made.length - replaced.entries });
          options.madeDirectories?.push(...made);
        }
      });
    });
  }

  /** Creates a directory; false when it already existed. `madeDirectories` receives the parents made on the way (parents first), even when it then fails. */
  async makeDir(parts: Components, options: { parents: boolean; gate?: UsageGate; madeDirectories?: MadeDirectories }): Promise<boolean> {
    return this.changing(async (alone) => {
      const shown = displayPath(parts);
      if (parts.length === 0) return false;
      let admission: Admission | undefined;
      if (options.gate) {
        // A directory already there adds nothing, and is never refused.
        const present = await this.stat(parts).catch(() => null);
        if (present?.type === "directory") return false;
        admission = options.gate.admit({ bytes: 0, entries: 1 + (options.parents ? await this.resolver.missingParents(parts) : 0) }, shown);
      }
      const made: MadeDirectories = [];
      let created = false;
      try {
        const loc = await this.resolver.locate(parts, options.parents, made);
        created = await withClosed(loc.dir, async () => {
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
        return created;
      } catch (error) {
        await this.unmake(made, alone);
        throw error;
      } finally {
        admission?.settle({ bytes: 0, entries: made.length + (created ? 1 : 0) });
        options.madeDirectories?.push(...made);
      }
    });
  }

  /**
   * Subscribes to the kernel's notifications of changes under the workspace
   * (the daemon's own among them); rejects where they are unavailable.
   */
  watchOutside(onEvents: (events: OutsideEvent[]) => void, onError: (error: Error) => void): Promise<OutsideSubscription> {
    return this.resolver.watchOutside(onEvents, onError);
  }

  /** The usage of the whole workspace, by a walk (a quota's first count). */
  async measure(): Promise<Usage> {
    return measureTree(this.resolver.openRoot());
  }

  /** Entries under a directory (symlinks never followed), in sorted walk order. */
  walk(parts: Components, options: WalkOptions): AsyncGenerator<WalkEntry> {
    // The walk's own generator rather than one delegating to it: a hop less per entry (a snapshot walks every entry).
    return walk(() => this.openDirectory(parts, displayPath(parts)), parts, options, this.resolver);
  }

  /** Entries under a staging directory (see createStaging and the registry's), as walk gives them: workspace paths of the tree it holds. */
  walkStaging(staging: Staging, options: WalkOptions): AsyncGenerator<WalkEntry> {
    return walk(async () => Directory.open(self(staging.dir), true), [], options, this.resolver);
  }

  /** Candidate files under a directory for the search workers, in batches in walk order (see walkFiles). */
  async *heldFiles(parts: Components, options: FileWalkOptions): AsyncGenerator<HeldBatch> {
    const start = await this.openDirectory(parts, displayPath(parts));
    yield* walkFiles(start, parts, options, this.resolver);
  }

  /** Deletes everything inside the workspace (its root stays). */
  async clear(): Promise<void> {
    return this.changing(async () => {
      const root = this.resolver.openRoot();
      await withClosed(root, () => removeContents(root));
    });
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
   * `madeDirectories` receives the parents made on the way to `parts`;
   * `landed`, the target's components (as beforeMerge sees them).
   */
  async mergeStaging(
    staging: Staging,
    parts: Components,
    beforeMerge: (into: string[], entryAt: (parts: readonly string[]) => TreeEntry) => Promise<void>,
    options: { directoryModes?: boolean; madeDirectories?: MadeDirectories; landed?: Landed } = {},
  ): Promise<void> {
    return this.changing(async () => {
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
          await this.makeDir(parts, { parents: true, madeDirectories: options.madeDirectories });
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
          if (options.landed) options.landed.parts = into;
          await beforeMerge(into, (at) => existingEntry(root, at));
        } finally {
          root.close();
        }
        await mergeInto(staging.dir, dest, options.directoryModes === true);
        await dest.sync();
      } finally {
        dest.close();
        await staging.discard();
      }
    });
  }

  /**
   * Moves entries staged under plain names at the top of `staging` into
   * place (a restore's files whose directories the tree already holds, so
   * that none is staged for them): each replaces what is at its path (a
   * directory there is removed first), its directories made when missing.
   */
  async placeStaged(staging: Staging, moves: ReadonlyArray<{ name: string; parts: Components }>): Promise<void> {
    return this.changing(async () => {
      await staging.release();
      for (const { name, parts } of moves) {
        const loc = await this.resolver.locate(parts, true);
        await withClosed(loc.dir, async () => {
          const present = await lstatOrNull(at(loc.dir, loc.name), displayPath(parts));
          if (present?.isDirectory()) await removeTree(loc.dir, loc.name);
          await fsp.rename(at(staging.dir, name), at(loc.dir, loc.name));
        });
      }
    });
  }

  /**
   * Gives each entry its mtime (seconds; atime: now), never following a
   * link; an entry gone meanwhile is left alone. For a restore that merged
   * into the tree: the merge moved its directories' mtimes.
   */
  async setTimes(entries: ReadonlyArray<{ parts: Components; mtime: number }>): Promise<void> {
    return this.changing(async () => {
      for (const { parts, mtime } of entries) {
        const loc = await this.resolver.locate(parts);
        await withClosed(loc.dir, async () => {
          try {
            await fsp.lutimes(at(loc.dir, loc.name), Date.now() / 1000, fileTime(mtime));
          } catch (error) {
            if (errnoOf(error) !== "ENOENT") throw translateErrno(error, displayPath(parts));
          }
        });
      }
    });
  }

  /**
   * Replaces the workspace's contents by the staging directory's, in place
   * (for bound workspaces, whose directory cannot be swapped): the old entries
   * move to a trash directory first, then the new ones move up. Not atomic.
   */
  async replaceContentsInPlace(staging: Staging): Promise<void> {
    return this.changing(async () => {
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
    });
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

/** Appends `content` to the regular file at `loc` (O_APPEND, then fsync). */
async function appendTo(loc: Location, content: Uint8Array, shown: string): Promise<void> {
  const handle = await fsp.open(at(loc.dir, loc.name), O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK).catch((error: unknown) => {
    if (errnoOf(error) === "ENOENT") throw new FileVanished();
    throw translateErrno(error, shown);
  });
  await withClosed(handle, async () => {
    const stats = await handle.stat({ bigint: true });
    assertRegularFile(stats, shown);
    assertSingleLink(stats, shown);
    try {
      await writeAll(handle, content);
      await handle.sync();
    } catch (error) {
      // A full disk may have taken part of it: the file goes back to what it was.
      await handle.truncate(Number(stats.size)).catch(() => undefined);
      throw translateErrno(error, shown);
    }
  });
}

/** The size a quota counts for the entry `stats` describes: a regular file's size, else 0. */
function sizeOfFile(stats: BigIntStats | null): number {
  return stats?.isFile() ? Number(stats.size) : 0;
}

/** What one entry that is not a directory counts for. */
function usageOfEntry(stats: BigIntStats): Usage {
  return { bytes: sizeOfFile(stats), entries: 1 };
}

/** What the directory at `loc` and everything in it count for. */
async function entryAndTree(loc: Location, shown: string): Promise<Usage> {
  try {
    const tree = await measureTree(Directory.open(at(loc.dir, loc.name)));
    return { bytes: tree.bytes, entries: tree.entries + 1 };
  } catch (error) {
    throw translateErrno(error, shown);
  }
}

async function withClosed<T>(handle: Directory | FileHandle, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } finally {
    await handle.close();
  }
}

/** Waits for both; the first failure, once both have settled (neither is left failing unheard). */
async function both(a: Promise<void>, b: Promise<void> | undefined): Promise<void> {
  const [first, second] = await Promise.allSettled([a, b]);
  if (first.status === "rejected") throw first.reason;
  if (second.status === "rejected") throw second.reason;
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
    /** Its temp name at the workspace root (what a journal records). */
    readonly name: string,
    /** How many bytes were received. */
    readonly size: number,
  ) {}

  /** Makes its name durable (an fsync of the root). */
  async syncName(): Promise<void> {
    await this.root.sync();
  }

  /**
   * Puts the bytes at `name` in `dir`, with `permissions`, in one step from
   * the temp name they have (a rename, or a link for `createOnly`): at any
   * moment they are either still at that name or in place, so a journal
   * that names it (a patch's) can always tell and finish the change. Across
   * file systems (a bound workspace with a mount below its root) they are
   * copied beside the target first, and leave their temp name only once in
   * place.
   */
  async placeAt(dir: Directory, name: string, permissions: number, createOnly: boolean, shown: string): Promise<void> {
    try {
      await chmodNoFollow(at(this.root, this.name), permissions);
      await (createOnly ? linkThenUnlink(at(this.root, this.name), at(dir, name)) : fsp.rename(at(this.root, this.name), at(dir, name)));
    } catch (error) {
      if (errnoOf(error) !== "EXDEV") throw translateErrno(error, shown);
      await placeTempFile(dir, await writeTempFile(dir, createReadStream(at(this.root, this.name)), permissions, shown), name, createOnly, shown);
      await fsp.unlink(at(this.root, this.name)).catch(() => undefined);
    }
    this.placed = true;
  }

  async discard(): Promise<void> {
    if (!this.placed) await fsp.unlink(at(this.root, this.name)).catch(() => undefined);
    this.placed = true;
    this.root.close();
  }
}

/** A file setAside took out of the tree: dropped once the change is whole, or put back when it failed. */
export class SetAsideFile {
  constructor(
    private readonly dir: Directory,
    private readonly name: string,
    private readonly temp: string,
    private readonly shown: string,
    /** Its workspace's count of changes to the tree (removing it changes its directory's version; putting it back, the tree). */
    private readonly changing: (change: () => Promise<void>) => Promise<void>,
  ) {}

  /** Removes it for good. */
  async drop(): Promise<void> {
    return this.changing(async () => {
      try {
        // Out of the tree already, and swept at start-up if it stays: a failure here must not fail the change it ends.
        await fsp.unlink(at(this.dir, this.temp)).catch(() => undefined);
        await this.dir.sync().catch(() => undefined);
      } finally {
        this.dir.close();
      }
    });
  }

  /** Puts it back under its name; never over an entry made there meanwhile (ALREADY_EXISTS, and it stays set aside until the start-up sweep). */
  async putBack(): Promise<void> {
    return this.changing(async () => {
      try {
        await linkThenUnlink(at(this.dir, this.temp), at(this.dir, this.name)).catch((error: unknown) => {
          throw translateErrno(error, this.shown);
        });
        await this.dir.sync();
      } finally {
        this.dir.close();
      }
    });
  }
}

/** Renames the temp file `temp` of `dir` over `name` (for `createOnly`, links it: no-clobber even against other processes); a failure removes it. */
async function placeTempFile(dir: Directory, temp: string, name: string, createOnly: boolean, shown: string): Promise<void> {
  try {
    await (createOnly ? linkThenUnlink(at(dir, temp), at(dir, name)) : fsp.rename(at(dir, temp), at(dir, name)));
  } catch (error) {
    await fsp.unlink(at(dir, temp)).catch(() => undefined);
    throw translateErrno(error, shown);
  }
}

/** chmod of the file itself, never through a link another process put at its name. */
async function chmodNoFollow(file: string | Buffer, permissions: number): Promise<void> {
  const handle = await fsp.open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  try {
    await handle.chmod(permissions);
  } finally {
    await handle.close();
  }
}

/** link(2) fails on an existing name: a create that never replaces. */
async function linkThenUnlink(from: string | Buffer, to: string | Buffer): Promise<void> {
  await fsp.link(from, to);
  await fsp.unlink(from);
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
/**
 * Gives the directory `dir` (whose mode was `had`) the permission bits of
 * `wanted`, through its descriptor (never through a link: the name may have
 * changed since it was looked at). Left as it is when the daemon may not
 * (a bound directory another user owns): the entries below it still merge.
 */
function takeMode(dir: Directory, had: number, wanted: number): void {
  if ((had & 0o7777) === (wanted & 0o7777)) return;
  try {
    fchmodSync(dir.fd, wanted & 0o7777);
  } catch (error) {
    if (errnoOf(error) !== "EPERM") throw error;
  }
}

/** `directoryModes`: a directory present on both sides takes the staged one's permission bits (a restore), else keeps its own (an import). */
async function mergeInto(src: Directory, dst: Directory, directoryModes: boolean): Promise<void> {
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
        if (directoryModes) takeMode(to.current(), present.mode, lstatSync(at(from.current(), child.name)).mode);
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
