// Race-free resolution of workspace paths (SPEC section 2), the technique of
// shared/notes/security.md 1.2: every step acts on a directory descriptor we
// hold, through /proc/self/fd/N/name, so a directory swapped for a symlink
// between a check and a use cannot redirect the use. Components are opened
// with O_NOFOLLOW; a symbolic link is followed by splicing its target into the
// path and resolving again from the root, and only while it stays inside.
import { fstatSync, lstatSync, promises as fsp, readlinkSync } from "node:fs";
import type { BigIntStats, PathLike } from "node:fs";
import { fail, FileToolsError } from "../errors.js";
import { type Components, checkCreatable, displayPath, joinComponents } from "./paths.js";
import { fsPath, nameFromBytes } from "./names.js";
import { errnoOf, translateErrno } from "./errno.js";
import { Directory } from "./directory.js";
import { versionOf } from "./entry.js";
import { subscribeOutside, type OutsideEvent, type OutsideSubscription } from "./outside.js";

const MAX_SYMLINKS = 40;

/** A descriptor we hold: a Directory, or an OpenFile's. */
interface Held {
  readonly fd: number;
}

/** `/proc/self/fd/N/name`: `name` (a held name, see names.ts) inside the directory we hold as N. */
export function at(dir: Held, name: string): string | Buffer {
  return fsPath(`/proc/self/fd/${dir.fd}/`, name);
}

/** The target of the symbolic link at `procPath`, as a held name string (its exact bytes kept). */
export async function readLinkAt(procPath: PathLike): Promise<string> {
  return nameFromBytes(await fsp.readlink(procPath, { encoding: "buffer" }));
}

/** `/proc/self/fd/N`: the very inode we hold as N. */
export function self(handle: Held): string {
  return `/proc/self/fd/${handle.fd}`;
}

/** What locateFollowing found: the target's parent and its stats (null: nothing there yet), or null for the root itself. */
export type FollowedLocation = (Location & { stats: BigIntStats | null }) | null;

/**
 * The directories a locate with createDirs made, parents first, each by its
 * components from the root (no link among them) and its version as made:
 * the workspace's usage counts them, a change that is undone removes them,
 * and the journal tells them.
 */
export type MadeDirectories = Array<{ parts: Components; version: string }>;

/** Links followed so far (bounded), and where to count the directories made. */
interface Budget {
  count: number;
  made?: MadeDirectories;
}

/** A held parent directory and the last component of a path inside it. */
export interface Location {
  /** The parent directory, open; the caller closes it. */
  dir: Directory;
  /** Components of the parent directory (no symlinks among them). */
  dirParts: Components;
  /** Last component. */
  name: string;
}

export class Resolver {
  private closed = false;

  constructor(
    /** The workspace root; the resolver owns it (see close). */
    private readonly root: Directory,
    /** realpath of the root, used to check what was opened and to place absolute link targets. */
    private readonly rootReal: string,
  ) {}

  /** The kernel's notifications of changes under the root (see outside.ts). */
  watchOutside(onEvents: (events: OutsideEvent[]) => void, onError: (error: Error) => void): Promise<OutsideSubscription> {
    this.assertOpen();
    return subscribeOutside(this.rootReal, onEvents, onError);
  }

  /** A fresh descriptor of the root (re-opening the held inode, never the host path); the caller closes it. */
  openRoot(): Directory {
    this.assertOpen();
    // /proc/self/fd/N is itself a (magic) link to follow.
    return Directory.open(self(this.root), true);
  }

  /** The root's descriptor for one walk (see Directory.borrow); the caller closes it, which lets go of it. */
  private borrowRoot(): Directory {
    this.assertOpen();
    return this.root.borrow();
  }

  /** The root's own metadata. */
  statRoot(): BigIntStats {
    this.assertOpen();
    return fstatSync(this.root.fd, { bigint: true });
  }

  /** Closes the root; calls made after that fail. Descriptors already opened through it stay valid. */
  close(): void {
    this.closed = true;
    this.root.close();
  }

  /**
   * Opens the parent directory of `parts` (which must not be empty). With
   * `createDirs`, missing directories are made on the way.
   */
  async locate(parts: Components, createDirs = false, made?: MadeDirectories): Promise<Location> {
    return this.walk(parts, createDirs, { count: 0, made });
  }

  /**
   * How many directories locate(parts, true) would make: the missing parents
   * of `parts` (a quota counts them before anything is made).
   */
  async missingParents(parts: Components): Promise<number> {
    for (let present = parts.length - 1; present > 0; present--) {
      try {
        const loc = await this.walk(parts.slice(0, present + 1), false, { count: 0 });
        loc.dir.close();
        return parts.length - 1 - present;
      } catch (error) {
        if (!(error instanceof FileToolsError && error.reason === "NOT_FOUND")) throw error;
      }
    }
    return parts.length - 1;
  }

  /**
   * Like locate, but when the last component is a symbolic link whose target
   * stays inside, follows it (repeatedly) and locates the target instead. The
   * target may not exist yet (a dangling link inside is written through).
   * null when a link leads to the workspace root itself (`rl -> .`), which has
   * no parent: the caller treats it as the root directory.
   */
  async locateFollowing(parts: Components, createDirs = false, made?: MadeDirectories): Promise<FollowedLocation> {
    const budget = { count: 0, made };
    let current = parts;
    for (;;) {
      if (current.length === 0) return null;
      const loc = await this.walk(current, createDirs, budget);
      let target: string | null;
      try {
        const stats = await lstatOrNull(at(loc.dir, loc.name), displayPath(current));
        if (!stats?.isSymbolicLink()) return { ...loc, stats };
        target = await readLinkAt(at(loc.dir, loc.name)).catch((error: unknown) => {
          // Swapped for something else since the lstat: resolve the name again.
          if (errnoOf(error) === "EINVAL" || errnoOf(error) === "ENOENT") return null;
          throw translateErrno(error, displayPath(current));
        });
      } catch (error) {
        loc.dir.close();
        throw error;
      }
      loc.dir.close();
      if (target === null) {
        if (++budget.count > MAX_SYMLINKS) fail("CONTENT_CHANGED", `${displayPath(current)} kept changing while it was resolved; retry`);
        continue;
      }
      current = this.splice(loc.dirParts, loc.name, target, [], budget);
    }
  }

  /** Checks that an open descriptor is inside the root (defence in depth). */
  assertInside(handle: Held, shownPath: string): void {
    const real = readlinkSync(self(handle)); // synchronous: see lstatOrNull
    if (real !== this.rootReal && !real.startsWith(this.rootReal + "/")) {
      fail("PATH_ESCAPES_WORKSPACE", `${shownPath} resolves outside the workspace`);
    }
  }

  /**
   * Replaces the link `dirParts/name` by its target within the path and checks
   * the result stays inside. Absolute targets are accepted only when they point
   * under the root's real path.
   */
  splice(dirParts: Components, name: string, target: string, rest: Components, budget: { count: number }): Components {
    const linkPath = displayPath([...dirParts, name]);
    if (++budget.count > MAX_SYMLINKS) fail("INVALID_PATH", `too many symbolic links at ${linkPath}`);
    let relative = target;
    if (target.startsWith("/")) {
      if (target !== this.rootReal && !target.startsWith(this.rootReal + "/")) {
        fail("PATH_ESCAPES_WORKSPACE", `symbolic link ${linkPath} points outside the workspace`);
      }
      relative = target.slice(this.rootReal.length) || "/";
    }
    try {
      return [...joinComponents(dirParts, relative), ...rest];
    } catch {
      fail("PATH_ESCAPES_WORKSPACE", `symbolic link ${linkPath} points outside the workspace`);
    }
  }

  private assertOpen(): void {
    if (this.closed) fail("CONTENT_CHANGED", "the workspace was replaced (restored from a snapshot) or deleted during the call; retry it");
  }

  private async walk(parts: Components, createDirs: boolean, budget: Budget): Promise<Location> {
    let pending = parts;
    restart: for (;;) {
      // Directories made on the way: what a link leads to must stay within the tree limits too.
      if (createDirs) checkCreatable(pending);
      // The held root itself, not a reopen of /proc/self/fd/N: that was the costliest system call of a small Read.
      let dir = this.borrowRoot();
      for (let i = 0; i < pending.length - 1; i++) {
        const name = pending[i]!;
        const child = pending.slice(0, i + 1);
        const shown = displayPath(child);
        let next: Directory;
        try {
          next = await this.openChildDirectory(dir, child, shown, createDirs, budget.made);
        } catch (error) {
          const code = errnoOf(error);
          if (code !== "ELOOP" && code !== "ENOTDIR") {
            dir.close();
            throw error;
          }
          // Not a directory: a symlink to follow, or a file in the way.
          let target: string | null;
          try {
            const stats = await lstatOrNull(at(dir, name), shown);
            if (!stats) fail("NOT_FOUND", `${shown} does not exist`);
            if (!stats.isSymbolicLink()) fail("NOT_A_DIRECTORY", `${shown} is not a directory`);
            target = await readLinkAt(at(dir, name)).catch((readError: unknown) => {
              // Swapped for something else since the lstat: look at the name again.
              if (errnoOf(readError) === "EINVAL" || errnoOf(readError) === "ENOENT") return null;
              throw translateErrno(readError, shown);
            });
          } finally {
            dir.close();
          }
          if (target === null) {
            if (++budget.count > MAX_SYMLINKS) fail("CONTENT_CHANGED", `${shown} kept changing while it was resolved; retry`);
            continue restart;
          }
          pending = this.splice(pending.slice(0, i), name, target, pending.slice(i + 1), budget);
          if (pending.length === 0) fail("INVALID_PATH", `${displayPath(parts)} resolves to the workspace root`);
          continue restart;
        }
        dir.close();
        dir = next;
        try {
          this.assertInside(dir, shown);
        } catch (error) {
          dir.close();
          throw error;
        }
      }
      return { dir, dirParts: pending.slice(0, -1), name: pending[pending.length - 1]! };
    }
  }

  /** Opens the directory `child` (components from the root) in `dir`, its parent. */
  private async openChildDirectory(dir: Directory, child: Components, shown: string, createDirs: boolean, made: MadeDirectories | undefined): Promise<Directory> {
    const name = child[child.length - 1]!;
    try {
      return Directory.open(at(dir, name));
    } catch (error) {
      if (errnoOf(error) !== "ENOENT") throw translateErrno(error, shown, ["ELOOP", "ENOTDIR"]);
      if (!createDirs) fail("NOT_FOUND", `${shown} does not exist`);
    }
    let created = false;
    try {
      await fsp.mkdir(at(dir, name), 0o755);
      created = true;
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") throw translateErrno(error, shown);
    }
    let opened: Directory;
    try {
      opened = Directory.open(at(dir, name));
    } catch (error) {
      // Made, then replaced by another program before it was opened: counted as made (an undo finds no such directory).
      if (created) made?.push({ parts: child, version: "" });
      throw translateErrno(error, shown, ["ELOOP", "ENOTDIR"]);
    }
    if (created) {
      let version = "";
      try {
        version = versionOf(fstatSync(opened.fd, { bigint: true }));
      } catch {
        // Made and opened, its version unread: told without one.
      }
      made?.push({ parts: child, version });
    }
    return opened;
  }
}

/**
 * lstat through a held directory; null when nothing is there. Synchronous, like
 * the other metadata calls on held descriptors: they answer from the kernel's
 * caches in microseconds, while a thread-pool round trip each made up most of
 * a small Read's latency.
 */
export async function lstatOrNull(procPath: PathLike, shown: string): Promise<BigIntStats | null> {
  try {
    return lstatSync(procPath, { bigint: true });
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return null;
    throw translateErrno(error, shown);
  }
}
