// Depth-first walk of a directory through held descriptors: names sorted
// within each directory, a directory before its contents, symlinks reported
// and never followed, hidden names and .gitignore'd entries pruned on request.
import { closeSync, constants, fstatSync, openSync, promises as fsp, readdirSync, readFileSync } from "node:fs";
import ignore, { type Ignore } from "ignore";
import type { Components } from "./paths.js";
import { displayPath } from "./paths.js";
import { type Entry, entryFromStats } from "./entry.js";
import { at, self, type Resolver } from "./resolver.js";
import { errnoOf } from "./errno.js";
import { Directory } from "./directory.js";
import { TEMP_FILE_PATTERN } from "./temp-files.js";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
const MAX_GITIGNORE_BYTES = 1 << 20;
/** Names of one directory examined together (their lstat and open calls run concurrently). */
const LOOKAHEAD = 64;

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
   * Regular files (with a single link) for which this returns true are opened
   * (read-only, O_NOFOLLOW, O_NONBLOCK, relative to the held directory, so
   * they are inside the workspace) and reported with `opened`.
   */
  open?: (file: Entry) => boolean;
}

/** A file the walk opened for reading; the consumer must close it. */
export interface OpenedFile {
  /**
   * The descriptor, for reading in a worker thread of this process (the
   * search pool): positional reads only, and never closed there.
   */
  readonly fd: number;
  close(): Promise<void>;
}

export type WalkEntry = Entry & { opened?: OpenedFile };

/** The .gitignore rules of one directory, which apply to paths below it. */
interface IgnoreLevel {
  /** Characters of a display path to drop for the path relative to the level's directory. */
  prefix: number;
  rules: Ignore;
}

/** Walks below `start` (an open directory at `startParts`); closes `start`. */
export async function* walk(start: Directory, startParts: Components, options: WalkOptions, resolver: Resolver): AsyncGenerator<WalkEntry> {
  const levels = await startLevels(start, startParts, options.respectGitignore, resolver);
  yield* walkDirectory(start, startParts, 1, levels, options);
}

/** The .gitignore rules above `start` when they are wanted; closes `start` when they cannot be read (a workspace closed meanwhile, an unreadable file). */
async function startLevels(start: Directory, startParts: Components, respectGitignore: boolean, resolver: Resolver): Promise<IgnoreLevel[]> {
  try {
    return respectGitignore ? await ancestorIgnoreLevels(startParts, resolver) : [];
  } catch (error) {
    start.close();
    throw error;
  }
}

async function* walkDirectory(dir: Directory, parts: Components, depth: number, levels: IgnoreLevel[], options: WalkOptions): AsyncGenerator<WalkEntry> {
  try {
    if (options.respectGitignore) {
      const rules = readGitignore(dir.fd);
      if (rules) levels = [...levels, ignoreLevel(parts, rules)];
    }
    const tested = forDirectory(levels);
    const names = (await fsp.readdir(self(dir)))
      .sort()
      .filter((name) => !TEMP_FILE_PATTERN.test(name) && (options.includeHidden || !name.startsWith(".")));
    // lstat (and open) a run of names at once: one round trip to the thread pool per run, not per name.
    for (let i = 0; i < names.length; i += LOOKAHEAD) {
      const run = names.slice(i, i + LOOKAHEAD);
      const allStats = await Promise.all(run.map((name) => fsp.lstat(at(dir, name), { bigint: true }).catch(() => null)));
      const found: ({ name: string; entry: WalkEntry; isDirectory: boolean; openable: boolean } | null)[] = run.map((name, k) => {
        const stats = allStats[k];
        if (!stats) return null; // removed while we walked
        const path = displayPath([...parts, name]);
        if (options.respectGitignore && isIgnored(tested, path, name, stats.isDirectory())) return null;
        const entry: WalkEntry = entryFromStats(path, stats);
        return { name, entry, isDirectory: stats.isDirectory(), openable: stats.isFile() && stats.nlink === 1n };
      });
      // Every open settles before anything can close `dir` (the paths go through its descriptor number).
      const opening = await Promise.allSettled(
        found.map(async (item) => {
          if (!item?.openable || !options.open?.(item.entry)) return;
          const handle = await fsp.open(at(dir, item.name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK).catch(() => null);
          if (handle) item.entry.opened = { fd: handle.fd, close: () => handle.close() };
        }),
      );
      const failed = opening.find((result) => result.status === "rejected");
      if (failed) {
        await Promise.all(found.map((item) => item?.entry.opened?.close()));
        throw failed.reason;
      }
      try {
        for (let k = 0; k < found.length; k++) {
          const item = found[k];
          if (!item) continue;
          found[k] = null; // the consumer owns its opened file from here
          yield item.entry;
          const descend =
            item.isDirectory && options.recursive && (options.maxDepth === 0 || depth < options.maxDepth) && !options.prune?.(item.entry);
          if (!descend) continue;
          const child = Directory.openIfThere(at(dir, item.name));
          if (child) yield* walkDirectory(child, [...parts, item.name], depth + 1, levels, options);
        }
      } finally {
        // Stopped early: close what was opened ahead and never handed out.
        await Promise.all(found.map((item) => item?.entry.opened?.close()));
      }
    }
  } finally {
    dir.close();
  }
}

function ignoreLevel(base: Components, rules: Ignore): IgnoreLevel {
  return { prefix: base.length === 0 ? 1 : displayPath(base).length + 1, rules };
}

/**
 * The levels' rules for testing one directory's entries: fresh copies of the
 * compiled rules, because an Ignore keeps every path it tested in a cache for
 * its lifetime. One instance over a whole walk held ~20,000 paths (and most of
 * the daemon's heap growth during a search); a directory's copy is dropped
 * with the directory.
 */
function forDirectory(levels: IgnoreLevel[]): IgnoreLevel[] {
  return levels.map((level) => ({ prefix: level.prefix, rules: ignore().add(level.rules) }));
}

/** Whether the entry `name` at the display path `path` is ignored. */
function isIgnored(levels: IgnoreLevel[], path: string, name: string, isDirectory: boolean): boolean {
  if (isDirectory && name === ".git") return true;
  let ignored = false;
  for (const level of levels) {
    const relative = isDirectory ? path.slice(level.prefix) + "/" : path.slice(level.prefix);
    const verdict = level.rules.test(relative);
    if (verdict.ignored) ignored = true;
    else if (verdict.unignored) ignored = false;
  }
  return ignored;
}

/** The rules of the directories above the walk's start, root first. */
async function ancestorIgnoreLevels(startParts: Components, resolver: Resolver): Promise<IgnoreLevel[]> {
  const levels: IgnoreLevel[] = [];
  let dir: Directory | null = resolver.openRoot();
  try {
    for (let i = 0; i < startParts.length && dir; i++) {
      const rules = readGitignore(dir.fd);
      if (rules) levels.push(ignoreLevel(startParts.slice(0, i), rules));
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
  /** Workspace paths. */
  paths: string[];
  /** The directory descriptor of each file, for openInHeldDirectory(dirFd, name) in the search workers. */
  dirFds: number[];
  names: string[];
  /** Lets the batch's directories go (each closes after the walk and its last batch are done with it). Call once. */
  release(): void;
}

/** A directory descriptor shared by the walk and the batches that name files in it. */
class HeldDirectory {
  private refs = 1;
  constructor(
    readonly fd: number,
    private readonly close: () => void,
  ) {}
  acquire(): void {
    this.refs++;
  }
  release(): void {
    if (--this.refs === 0) this.close();
  }
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
    for (const file of walkFilesIn(new HeldDirectory(start.fd, () => start.close()), startParts, levels, options)) {
      if (file === DIRECTORY_READ) {
        // Many directories with few files between batches: let other calls in now and then.
        if (++directories % DIRECTORIES_PER_TURN === 0) await new Promise(setImmediate);
        continue;
      }
      if (!batch.directories.has(file.dir)) {
        file.dir.acquire();
        batch.directories.add(file.dir);
      }
      batch.paths.push(file.path);
      batch.dirFds.push(file.dir.fd);
      batch.names.push(file.name);
      if (batch.paths.length >= options.batchFiles(batches) || batch.directories.size >= MAX_BATCH_DIRECTORIES) {
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

function newBatch(): HeldBatch & { directories: Set<HeldDirectory> } {
  const directories = new Set<HeldDirectory>();
  return {
    paths: [],
    dirFds: [],
    names: [],
    directories,
    release() {
      for (const dir of directories) dir.release();
      directories.clear();
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

function* walkFilesIn(
  dir: HeldDirectory,
  parts: Components,
  levels: IgnoreLevel[],
  options: FileWalkOptions,
): Generator<{ dir: HeldDirectory; path: string; name: string } | typeof DIRECTORY_READ> {
  try {
    const all = readdirSync(`/proc/self/fd/${dir.fd}`, { withFileTypes: true });
    yield DIRECTORY_READ;
    // Only a directory that lists a .gitignore costs an open for it.
    if (options.respectGitignore && all.some((e) => e.name === ".gitignore")) {
      const rules = readGitignore(dir.fd);
      if (rules) levels = [...levels, ignoreLevel(parts, rules)];
    }
    const entries = all
      .filter((e) => !TEMP_FILE_PATTERN.test(e.name) && (options.includeHidden || !e.name.startsWith(".")))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const prefix = parts.length === 0 ? "/" : displayPath(parts) + "/";
    const tested = forDirectory(levels);
    for (const dirent of entries) {
      const isDirectory = dirent.isDirectory();
      if (!isDirectory && !dirent.isFile()) continue; // symlinks, FIFOs, sockets, devices
      const path = prefix + dirent.name;
      if (options.respectGitignore && isIgnored(tested, path, dirent.name, isDirectory)) continue;
      if (isDirectory) {
        if (options.prune?.(path)) continue;
        const child = openDirectorySync(dir.fd, dirent.name);
        if (child >= 0) yield* walkFilesIn(new HeldDirectory(child, () => closeSync(child)), [...parts, dirent.name], levels, options);
        continue;
      }
      if (options.want && !options.want(path)) continue;
      yield { dir, path, name: dirent.name };
    }
  } finally {
    dir.release();
  }
}

/** A subdirectory of the held directory `dirFd`, never through a symbolic link; -1 when it is gone or not a directory. */
function openDirectorySync(dirFd: number, name: string): number {
  try {
    return openSync(`/proc/self/fd/${dirFd}/${name}`, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch {
    return -1;
  }
}

/** The rules of the held directory's .gitignore (read synchronously: a small file, at most 1 MiB), or null. */
function readGitignore(dirFd: number): Ignore | null {
  let fd: number;
  try {
    fd = openSync(`/proc/self/fd/${dirFd}/.gitignore`, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    if (errnoOf(error) === "ENOENT" || errnoOf(error) === "ELOOP") return null;
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size > MAX_GITIGNORE_BYTES) return null;
    return ignore().add(readFileSync(fd, "utf8"));
  } finally {
    closeSync(fd);
  }
}
