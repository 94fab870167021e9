// Depth-first walk of a directory through held descriptors: names sorted
// within each directory, a directory before its contents, symlinks reported
// and never followed, hidden names and .gitignore'd entries pruned on request.
// Iterative, over a HeldPath (tree.ts): any depth, no recursion, a bounded
// number of descriptors.
import { closeSync, constants, fstatSync, lstatSync, openSync, promises as fsp, readSync, type BigIntStats } from "node:fs";
import type { Ignore } from "ignore";
import { forDirectory, gitignoreRules, ignoreLevel, isIgnored, MAX_GITIGNORE_BYTES, type IgnoreLevel, type IgnoreTest } from "./ignore-rules.js";
import type { Components } from "./paths.js";
import { displayPath } from "./paths.js";
import { type Entry, entryFromStats } from "./entry.js";
import { at, type Resolver } from "./resolver.js";
import { errnoOf, translateErrno } from "./errno.js";
import { Directory } from "./directory.js";
import { TEMP_FILE_PATTERN } from "./temp-files.js";
import { bytesOfName, escapeName, fsPath, nameFromBytes } from "./names.js";
import { HeldPath, readNames } from "./tree.js";
import { isLoneFile } from "./lone-file.js";
import { openAsFound, type SkipReason } from "./held-open.js";
import { OpenedFile } from "./opened-file.js";

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;
/** Names of one directory examined together (on the thread pool, their lstat calls run concurrently). */
const LOOKAHEAD = 64;
/**
 * lstat runs synchronously while it is fast — names in the kernel's cache, a
 * run in well under a millisecond, 2–3 times cheaper than a round trip to the
 * thread pool per name — yielding to the event loop every SLICE_MS; a run
 * slower than SLOW_RUN_MS (a cold cache, a network file system) moves the
 * walk to the thread pool, not to hold the event loop. A run is also slow
 * when the process merely waited for a core (a busy machine: a 20,000-file
 * walk then went to the pool for good, and spent about as long again in
 * promises and their garbage), so after FIRST_POOL_RUNS runs a synchronous one
 * is tried again, the wait doubling after each slow try.
 */
const SLOW_RUN_MS = 8;
const SLICE_MS = 5;
const FIRST_POOL_RUNS = 8;

/** How a walk calls lstat: synchronously while runs are fast. */
interface Pace {
  sync: boolean;
  /** When the walk last let the event loop run. */
  sliceStart: number;
  /** On the pool: runs left before a synchronous one is tried. */
  poolRuns: number;
  /** Runs on the pool after the next slow one. */
  backoff: number;
}

export interface WalkOptions {
  /** Descend into subdirectories. */
  recursive: boolean;
  /** With recursive: levels to go down; 1 = the directory's own entries, 0 = no limit. */
  maxDepth: number;
  /** Include names starting with ".". */
  includeHidden: boolean;
  /** Skip what .gitignore files exclude (from the root down), and ".git". */
  respectGitignore: boolean;
  /** Directories for which this returns true are reported but not descended into. */
  prune?: (directory: Entry) => boolean;
  /**
   * Regular files for which this returns true are opened as they are reached
   * (held-open.ts: read-only, O_NOFOLLOW, relative to the held directory, so
   * they are inside the workspace, and checked to be the inode the walk found
   * with a single link) and reported with `opened`, or with the reason they
   * were `skipped`.
   */
  open?: (file: Entry) => boolean;
}

/** An entry of the walk, with its components (held names, for the file system) beside its shown path; the consumer must close `opened`. */
export type WalkEntry = Entry & { parts: Components; opened?: OpenedFile; skipped?: SkipReason };

/** Walks below the directory at `startParts`, which `open` opens when the first entry is asked for; closes it. */
export async function* walk(open: () => Promise<Directory>, startParts: Components, options: WalkOptions, resolver: Resolver): AsyncGenerator<WalkEntry> {
  const start = await open();
  const rootLevels = await startLevels(start, startParts, options.respectGitignore, resolver);
  const path = new HeldPath(start);
  const stack: DirectoryVisit[] = [];
  const pace: Pace = { sync: true, sliceStart: performance.now(), poolRuns: 0, backoff: FIRST_POOL_RUNS };
  try {
    stack.push(visit(path.current(), startParts, 1, rootLevels, options));
    while (stack.length > 0) {
      const current = stack[stack.length - 1]!;
      if (current.next === current.found.length) {
        if (current.read < current.names.length) {
          current.found = await lstatRun(path.current(), current, options, pace);
          current.next = 0;
          continue;
        }
        stack.pop();
        if (stack.length > 0) path.leave();
        continue;
      }
      const item = current.found[current.next]!;
      current.found[current.next++] = null;
      if (!item) continue;
      // Opened only now, so none is held open while the walk is below this directory; the consumer owns it from here.
      if (item.stats.isFile() && options.open?.(item.entry)) openFound(path.current(), item);
      yield item.entry;
      const descend = item.isDirectory && options.recursive && (options.maxDepth === 0 || current.depth < options.maxDepth) && !options.prune?.(item.entry);
      if (descend && path.enter(item.name)) stack.push(visit(path.current(), [...current.parts, item.name], current.depth + 1, current.levels, options));
    }
  } catch (error) {
    // An unreadable directory (chmod 000 by an agent's shell), an I/O error: a reason, naming where.
    throw translateErrno(error, displayPath(stack.at(-1)?.parts ?? startParts));
  } finally {
    path.close();
  }
}

/**
 * Whether a walk would list an entry made under this held name by that
 * name: not one of the daemon's temp files (which it skips), and a name the
 * file system gives back as the same string. For a listing made without a
 * walk (seekable-read.ts); names a walk reads are so by construction.
 */
export function listedByWalk(name: string): boolean {
  return !TEMP_FILE_PATTERN.test(name) && (name.isWellFormed() || nameFromBytes(bytesOfName(name)) === name);
}

/** Compares entries in the order walk lists them: a directory before what it holds, names sorted within each directory. */
export function walkOrder(a: { parts: Components }, b: { parts: Components }): number {
  const common = Math.min(a.parts.length, b.parts.length);
  for (let i = 0; i < common; i++) {
    if (a.parts[i] !== b.parts[i]) return a.parts[i]! < b.parts[i]! ? -1 : 1;
  }
  return a.parts.length - b.parts.length;
}

interface FoundEntry {
  name: string;
  entry: WalkEntry;
  isDirectory: boolean;
  /** The lstat that found it (the open is checked against it: held-open.ts). */
  stats: BigIntStats;
}

interface DirectoryVisit {
  parts: Components;
  /** Its shown path with a trailing "/": its entries' paths are this and their escaped names. */
  prefix: string;
  depth: number;
  levels: IgnoreLevel | null;
  tested: IgnoreTest[];
  names: string[];
  /** Names lstat'ed so far. */
  read: number;
  /** The current run of entries (null: handed out or skipped). */
  found: (FoundEntry | null)[];
  next: number;
}

function visit(dir: Directory, parts: Components, depth: number, levels: IgnoreLevel | null, options: WalkOptions): DirectoryVisit {
  if (options.respectGitignore) {
    const rules = readGitignore(dir.fd);
    if (rules) levels = ignoreLevel(parts, rules, levels);
  }
  const names = readNames(dir)
    .map((child) => child.name)
    .filter((name) => !TEMP_FILE_PATTERN.test(name) && (options.includeHidden || !name.startsWith(".")))
    .sort();
  const prefix = parts.length === 0 ? "/" : displayPath(parts) + "/";
  return { parts, prefix, depth, levels, tested: forDirectory(levels), names, read: 0, found: [], next: 0 };
}

/** lstat a run of names at once: in a row while that is fast (Pace), else one round trip to the thread pool per run, not per name. */
async function lstatRun(dir: Directory, current: DirectoryVisit, options: WalkOptions, pace: Pace): Promise<(FoundEntry | null)[]> {
  const run = current.names.slice(current.read, current.read + LOOKAHEAD);
  current.read += run.length;
  let allStats: (BigIntStats | null)[];
  if (!pace.sync && pace.poolRuns-- === 0) pace.sync = true;
  if (pace.sync) {
    if (performance.now() - pace.sliceStart > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      pace.sliceStart = performance.now();
    }
    const started = performance.now();
    allStats = run.map((name) => lstatOrNull(at(dir, name)));
    if (performance.now() - started < SLOW_RUN_MS) pace.backoff = FIRST_POOL_RUNS;
    else {
      pace.sync = false;
      pace.poolRuns = pace.backoff;
      pace.backoff *= 2;
    }
  } else {
    allStats = await Promise.all(run.map((name) => fsp.lstat(at(dir, name), { bigint: true }).catch(() => null)));
  }
  return run.map((name, k) => {
    const stats = allStats[k];
    if (!stats) return null; // removed while we walked
    const parts = [...current.parts, name];
    const path = current.prefix + escapeName(name);
    if (options.respectGitignore && isIgnored(current.tested, path, name, stats.isDirectory())) return null;
    // Its parts set on the entry made (not a copy of it with them: one object less per entry).
    const entry: WalkEntry = Object.assign(entryFromStats(path, stats), { parts });
    return { name, entry, isDirectory: stats.isDirectory(), stats };
  });
}

function lstatOrNull(path: string | Buffer): BigIntStats | null {
  try {
    return lstatSync(path, { bigint: true });
  } catch {
    return null;
  }
}

/** Opens the regular file `item` in `dir`, reporting it as `opened` or `skipped`. */
function openFound(dir: Directory, item: FoundEntry): void {
  const opened = openAsFound(dir.fd, item.name, item.stats);
  if ("skipped" in opened) item.entry.skipped = opened.skipped;
  else item.entry.opened = new OpenedFile(opened.fd, opened.stats, dir.borrow(), item.name);
}

/** The .gitignore rules above `start` when they are wanted; closes `start` when they cannot be read (a workspace closed meanwhile, an unreadable file). */
async function startLevels(start: Directory, startParts: Components, respectGitignore: boolean, resolver: Resolver): Promise<IgnoreLevel | null> {
  try {
    return respectGitignore ? await ancestorIgnoreLevels(startParts, resolver) : null;
  } catch (error) {
    start.close();
    throw error;
  }
}

/** The rules of the directories above the walk's start, root first. */
async function ancestorIgnoreLevels(startParts: Components, resolver: Resolver): Promise<IgnoreLevel | null> {
  let levels: IgnoreLevel | null = null;
  let dir: Directory | null = resolver.openRoot();
  try {
    for (let i = 0; i < startParts.length && dir; i++) {
      const rules = readGitignore(dir.fd);
      if (rules) levels = ignoreLevel(startParts.slice(0, i), rules, levels);
      const next: Directory | null = Directory.openIfThere(at(dir, startParts[i]!));
      dir.close();
      dir = next;
    }
  } finally {
    dir?.close();
  }
  return levels;
}

/** Files found by walkFiles, in walk order: names inside directories the walk holds open. */
export interface HeldBatch {
  /** Workspace paths (shown, escaped). */
  paths: string[];
  /** The directory descriptor of each file, for openInHeldDirectory(dirFd, name) in the search workers. */
  dirFds: number[];
  /** Held names (names.ts). */
  names: string[];
  /** Lets the batch's directories go (each closes after the walk and its last batch are done with it). Call once. */
  release(): void;
}

export interface FileWalkOptions {
  includeHidden: boolean;
  respectGitignore: boolean;
  /** Directories for which this returns true are skipped with all they contain. */
  prune?: (path: string) => boolean;
  /** Files for which this returns false are not reported. */
  want?: (path: string) => boolean;
  /** Files in the batch numbered `n` (from 0; the last may have fewer). */
  batchFiles(n: number): number;
  /** Each directory's names in the order the file system lists them, not sorted (unset = sorted). */
  unsorted?: boolean;
}

/**
 * Like walk, but for reading many files fast: the directories are read
 * synchronously (one readdir with types each; no per-file system call, no
 * promise per file), and the candidate files (regular files, by the
 * directory's record) come in batches, in walk order. Symbolic links are
 * never followed. A batch holds its files' directories open until released.
 */
export async function* walkFiles(start: Directory, startParts: Components, options: FileWalkOptions, resolver: Resolver): AsyncGenerator<HeldBatch> {
  const levels = await startLevels(start, startParts, options.respectGitignore, resolver);
  let batch = newBatch();
  let batches = 0;
  try {
    let directories = 0;
    for (const file of walkFilesIn(start, startParts, levels, options)) {
      if (file === DIRECTORY_READ) {
        // Many directories with few files between batches: let other calls in now and then.
        if (++directories % DIRECTORIES_PER_TURN === 0) await new Promise(setImmediate);
        continue;
      }
      if (!batch.holds.has(file.dir)) batch.holds.set(file.dir, file.dir.hold());
      batch.paths.push(file.path);
      batch.dirFds.push(file.dir.fd);
      batch.names.push(file.name);
      if (batch.paths.length >= options.batchFiles(batches) || batch.holds.size >= MAX_BATCH_DIRECTORIES) {
        batches++;
        const full = batch;
        batch = newBatch();
        yield full;
      }
    }
    if (batch.paths.length > 0) {
      const last = batch;
      batch = newBatch();
      yield last;
    }
  } finally {
    batch.release(); // the walk stopped early: a batch never handed out
  }
}

function newBatch(): HeldBatch & { holds: Map<Directory, () => void> } {
  const holds = new Map<Directory, () => void>();
  return {
    paths: [],
    dirFds: [],
    names: [],
    holds,
    release() {
      for (const release of holds.values()) release();
      holds.clear();
    },
  };
}

/**
 * Directories one batch may hold open: a batch ends there, whatever its
 * files, so that the batches a consumer keeps in flight hold a bounded number
 * of descriptors (a tree of one file per directory would otherwise hold one
 * per file).
 */
const MAX_BATCH_DIRECTORIES = 64;

/** What walkFilesIn yields after each readdir. */
const DIRECTORY_READ = null;
/** Directories read synchronously in one turn of the event loop, at most. */
const DIRECTORIES_PER_TURN = 64;

interface FileVisit {
  prefix: string;
  tested: IgnoreTest[];
  levels: IgnoreLevel | null;
  parts: Components;
  entries: { name: string; kind: string }[];
  next: number;
}

/** The candidate files below `start` (which it closes), iteratively. */
function* walkFilesIn(
  start: Directory,
  startParts: Components,
  startLevels: IgnoreLevel | null,
  options: FileWalkOptions,
): Generator<{ dir: Directory; path: string; name: string } | typeof DIRECTORY_READ> {
  const path = new HeldPath(start);
  const stack: FileVisit[] = [];
  try {
    stack.push(fileVisit(path.current(), startParts, startLevels, options));
    yield DIRECTORY_READ;
    while (stack.length > 0) {
      const current = stack[stack.length - 1]!;
      if (current.next === current.entries.length) {
        stack.pop();
        if (stack.length > 0) path.leave();
        continue;
      }
      const child = current.entries[current.next++]!;
      const isDirectory = child.kind === "directory";
      if (!isDirectory && child.kind !== "file") continue; // symlinks, FIFOs, sockets, devices
      const shown = current.prefix + escapeName(child.name);
      if (options.respectGitignore && isIgnored(current.tested, shown, child.name, isDirectory)) continue;
      if (isDirectory) {
        if (options.prune?.(shown)) continue;
        if (path.enter(child.name)) {
          stack.push(fileVisit(path.current(), [...current.parts, child.name], current.levels, options));
          yield DIRECTORY_READ;
        }
        continue;
      }
      if (options.want && !options.want(shown)) continue;
      yield { dir: path.current(), path: shown, name: child.name };
    }
  } catch (error) {
    throw translateErrno(error, displayPath(stack.at(-1)?.parts ?? startParts));
  } finally {
    path.close();
  }
}

function fileVisit(dir: Directory, parts: Components, levels: IgnoreLevel | null, options: FileWalkOptions): FileVisit {
  const all = readNames(dir, options.unsorted);
  // Only a directory that lists a .gitignore costs an open for it.
  if (options.respectGitignore && all.some((e) => e.name === ".gitignore")) {
    const rules = readGitignore(dir.fd);
    if (rules) levels = ignoreLevel(parts, rules, levels);
  }
  const entries = all.filter((e) => !TEMP_FILE_PATTERN.test(e.name) && (options.includeHidden || !e.name.startsWith(".")));
  if (!options.unsorted) entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { prefix: parts.length === 0 ? "/" : displayPath(parts) + "/", tested: forDirectory(levels), levels, parts, entries, next: 0 };
}

/**
 * The rules of the held directory's .gitignore (read synchronously: a small
 * file, at most 1 MiB), or null: none, too large, or not a lone regular file
 * once read (the rule of lone-file.ts: its bytes could be another file's).
 */
function readGitignore(dirFd: number): Ignore | null {
  let fd: number;
  try {
    fd = openSync(fsPath(`/proc/self/fd/${dirFd}/`, ".gitignore"), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    if (errnoOf(error) === "ENOENT" || errnoOf(error) === "ELOOP") return null;
    throw error;
  }
  try {
    const buffer = Buffer.allocUnsafe(Math.min(fstatSync(fd).size, MAX_GITIGNORE_BYTES) + 1);
    let filled = 0;
    for (let n = -1; n !== 0 && filled < buffer.length; filled += n) n = readSync(fd, buffer, filled, buffer.length - filled, filled);
    if (filled > MAX_GITIGNORE_BYTES || !isLoneFile(fd)) return null;
    return gitignoreRules(buffer.toString("utf8", 0, filled));
  } catch (error) {
    // EISDIR: a directory named .gitignore
    if (errnoOf(error) === "EISDIR") return null;
    throw error;
  } finally {
    closeSync(fd);
  }
}
