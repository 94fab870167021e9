// Walking trees of any depth without recursion and without a descriptor per
// level. A HeldPath is the chain of directories from a start directory down
// to the one being worked on; only the deepest WINDOW of them stay open (and
// the start), the others are reopened on the way back up, one name at a time
// from the nearest held ancestor (O_NOFOLLOW) and checked to be the same
// directory (device and inode), so a tree swapped meanwhile is noticed, never
// followed. A 10,000-deep tree costs ~WINDOW descriptors and no stack.
import { fstatSync, opendirSync, readdirSync, type Dirent } from "node:fs";
import { fail } from "../errors.js";
import { Directory } from "./directory.js";
import { byteLengthOfName, nameFromBytes } from "./names.js";
import { at, self } from "./resolver.js";

/** Directories of a HeldPath kept open below its start. */
const WINDOW = 32;

export type NameKind = "directory" | "file" | "symlink" | "other";

export interface DirectoryName {
  /** A held name (names.ts): its exact bytes are kept. */
  name: string;
  kind: NameKind;
}

/**
 * The entries of a held directory, with types, names as held strings: in
 * byte order (libuv's scandir sorts them), or with `listed` in the order the
 * file system lists them (opendir, as find and rg read; about twice the cost
 * per entry: a call for each).
 */
export function readNames(dir: Directory, listed = false): DirectoryName[] {
  if (!listed) {
    // Names come as UTF-8 strings (a Buffer per name cost ~4 µs more per directory of ~10,
    // about a third of reading it); only a directory where one decoded lossily (U+FFFD, or a
    // name that holds it) is read again as bytes, for its exact names.
    const named = readdirSync(self(dir), { withFileTypes: true });
    if (!named.some((dirent) => dirent.name.includes("\uFFFD"))) return named.map((dirent) => ({ name: dirent.name, kind: kindOf(dirent) }));
    return readdirSync(self(dir), { withFileTypes: true, encoding: "buffer" }).map(directoryName);
  }
  const names: DirectoryName[] = [];
  // Node takes encoding "buffer" here as in readdir (names as bytes); @types/node 20 does not say so.
  const handle = opendirSync(self(dir), { encoding: "buffer" as BufferEncoding, bufferSize: 256 });
  const next = () => handle.readSync() as unknown as Dirent<Buffer> | null;
  try {
    for (let dirent = next(); dirent !== null; dirent = next()) names.push(directoryName(dirent));
  } finally {
    handle.closeSync();
  }
  return names;
}

function directoryName(dirent: Dirent<Buffer>): DirectoryName {
  return { name: nameFromBytes(dirent.name), kind: kindOf(dirent) };
}

function kindOf(dirent: Dirent<Buffer> | Dirent): NameKind {
  return dirent.isDirectory() ? "directory" : dirent.isFile() ? "file" : dirent.isSymbolicLink() ? "symlink" : "other";
}

interface Frame {
  name: string;
  dev: bigint;
  ino: bigint;
  dir: Directory | null;
}

export class HeldPath {
  private readonly frames: Frame[];

  /** Takes ownership of `start` (closed by close()). */
  constructor(start: Directory) {
    const stats = fstatSync(start.fd, { bigint: true });
    this.frames = [{ name: "", dev: stats.dev, ino: stats.ino, dir: start }];
  }

  /** Levels below the start (0 at the start). */
  get depth(): number {
    return this.frames.length - 1;
  }

  /** Names from the start down to the current directory. */
  names(): string[] {
    return this.frames.slice(1).map((frame) => frame.name);
  }

  /** The current directory, open (reopened if the window had closed it). */
  current(): Directory {
    const top = this.frames[this.frames.length - 1]!;
    if (top.dir) return top.dir;
    let held = this.frames.length - 1;
    while (!this.frames[held]!.dir) held--;
    for (let k = held + 1; k < this.frames.length; k++) {
      const frame = this.frames[k]!;
      const dir = Directory.openIfThere(at(this.frames[k - 1]!.dir!, frame.name));
      const stats = dir ? fstatSync(dir.fd, { bigint: true }) : null;
      if (!dir || stats!.dev !== frame.dev || stats!.ino !== frame.ino) {
        dir?.close();
        fail("CONTENT_CHANGED", "a directory was moved or replaced while the tree was walked; retry");
      }
      frame.dir = dir;
    }
    this.trim();
    return top.dir!;
  }

  /** Enters the subdirectory `name` of the current directory (never through a link); false when it is gone or not a directory. */
  enter(name: string): boolean {
    const dir = Directory.openIfThere(at(this.current(), name));
    if (!dir) return false;
    const stats = fstatSync(dir.fd, { bigint: true });
    this.frames.push({ name, dev: stats.dev, ino: stats.ino, dir });
    this.trim();
    return true;
  }

  /** Goes back up to the parent (which must not be the start's). */
  leave(): void {
    if (this.frames.length === 1) throw new Error("HeldPath.leave at its start");
    this.frames.pop()!.dir?.close();
  }

  /** Closes every directory held, the start too. */
  close(): void {
    for (const frame of this.frames) frame.dir?.close();
    this.frames.length = 0;
  }

  /** Keeps the start and the deepest WINDOW directories open. */
  private trim(): void {
    const stale = this.frames.length - 1 - WINDOW;
    if (stale < 1) return;
    const frame = this.frames[stale]!;
    frame.dir?.close();
    frame.dir = null;
  }
}

/** A step of a DepthFirst walk: an entry (the path at its parent), or a directory done with (the path back at its parent). */
export type TreeStep = { entry: DirectoryName } | { left: string };

/**
 * The entries below a HeldPath's current directory, depth first, without
 * recursion: next() gives each entry while the path is at its parent, and
 * after a directory's last entry the name of the directory left. A directory
 * is gone into only when the caller calls descend() on it.
 */
export class DepthFirst {
  private readonly pending: Array<{ names: DirectoryName[]; next: number }>;

  constructor(private readonly path: HeldPath) {
    this.pending = [{ names: readNames(path.current()), next: 0 }];
  }

  /** Levels of the entry just given (1 for the start directory's entries). */
  get level(): number {
    return this.pending.length;
  }

  /** The next step, or null when the start directory is done. */
  next(): TreeStep | null {
    for (;;) {
      const level = this.pending.at(-1);
      if (!level) return null;
      if (level.next < level.names.length) return { entry: level.names[level.next++]! };
      this.pending.pop();
      if (this.pending.length === 0) return null;
      const left = this.path.names().at(-1)!;
      this.path.leave();
      return { left };
    }
  }

  /** Goes into the directory `name` just given: its entries come next. False when it is gone or not a directory. */
  descend(name: string): boolean {
    if (!this.path.enter(name)) return false;
    this.pending.push({ names: readNames(this.path.current()), next: 0 });
    return true;
  }
}

/**
 * Whether the tree below `dir` (which it closes) fits a budget: depth levels below it and
 * bytes of paths relative to it (components joined by "/"). Returns the
 * relative path of the first entry past it, or null when everything fits.
 * Stops at the first overflow: it costs at most the size of the tree.
 */
export function treeFits(dir: Directory, budget: { depth: number; bytes: number }): string[] | null {
  const path = new HeldPath(dir);
  try {
    const walk = new DepthFirst(path);
    /** Bytes of the path of each directory gone into, the start's (0) first. */
    const bytesOf = [0];
    for (let step = walk.next(); step; step = walk.next()) {
      if ("left" in step) {
        bytesOf.pop();
        continue;
      }
      const parent = bytesOf.at(-1)!;
      const bytes = parent + (parent > 0 ? 1 : 0) + byteLengthOfName(step.entry.name);
      if (walk.level > budget.depth || bytes > budget.bytes) return [...path.names(), step.entry.name];
      if (step.entry.kind === "directory" && walk.descend(step.entry.name)) bytesOf.push(bytes);
    }
    return null;
  } finally {
    path.close();
  }
}
