// Reads at a snapshot (proto files.proto, "Reads at a snapshot"): a stored
// seekable snapshot's tree, built from its table of contents (contents.ts),
// answering the read-only tools (tools/source.ts) as the live workspace would
// on the tree restored from it — without restoring it, and without touching
// the live workspace. A file's bytes come by ranged reads of only the chunks
// that cover what is asked (seekable-read.ts inflates them, bounded, and
// checks each against its SHA-256).
//
// The table of contents comes from a store others can write to: every path in
// it must be a canonical workspace path (no "..", no "." nor empty component,
// nothing a request path could not be) below a directory it lists, each named
// once — DATA_LOSS otherwise, before anything is served. Links are followed
// lexically inside the tree by the live resolver's rules (paths.ts): a target
// that climbs out, or an absolute one (the host path the snapshot was taken
// at is not known here), is PATH_ESCAPES_WORKSPACE. So no path of a snapshot
// can name anything but an entry of that snapshot.
import { hash } from "node:crypto";
import { fail, FileToolsError } from "../errors.js";
import type { Entry, EntryType } from "../workspace/entry.js";
import { forDirectory, gitignoreRules, ignoreLevel, isIgnored, MAX_GITIGNORE_BYTES, type IgnoreLevel, type IgnoreTest } from "../workspace/ignore-rules.js";
import { bytesOfName, escapeName } from "../workspace/names.js";
import { displayPath, joinComponents, namesDirectory, parsePath, type Components } from "../workspace/paths.js";
import { BINARY_HEAD_BYTES } from "../text/binary.js";
import type { ReadableFile, ReadSource } from "../tools/source.js";
import type { WalkOptions } from "../workspace/walk.js";
import { chunksByFile, type ChunkRef, type Contents } from "./contents.js";
import { recordsOf } from "./file-list.js";
import type { Manifest } from "./manifest.js";
import { fileChunks, WholeFileCheck } from "./seekable-read.js";
import type { SnapshotStore } from "./store.js";

/** Links followed in one path, as the live resolver allows. */
const MAX_SYMLINKS = 40;
/** Ranged reads in flight ahead of a file read from start to end (Download, a Read to the end). */
const READS_AHEAD = 2;
/** Buffers handed out by chunks() unless asked otherwise (the live OpenFile's). */
const STREAM_CHUNK_BYTES = 1 << 20;
/**
 * Every Read and Stat first reads a file's first BINARY_HEAD_BYTES (binary
 * detection): kept for this many files of a tree, so that a window further
 * on reads its own chunk alone.
 */
const HEADS_KEPT = 256;
/** The root of a restored tree is a directory the daemon makes: this mode. */
const ROOT_MODE = 0o755;

interface Node {
  entry: Entry;
  /** A file's content: its chunks and SHA-256 (hex). */
  content?: { chunks: ChunkRef[]; sha256: string };
  /** A link's target text (held name string). */
  target?: string;
  /** A directory's children: held names, sorted as a live walk sorts them. */
  children?: string[];
}

type WalkRequest = Pick<WalkOptions, "recursive" | "maxDepth" | "includeHidden" | "respectGitignore">;

/** Trees already built, for each table of contents kept (Snapshots keeps the last few). */
const built = new WeakMap<Contents, SnapshotTree>();

/** The tree of one stored snapshot; a call reads it through source(signal). */
export class SnapshotTree {
  private readonly nodes = new Map<string, Node>();
  /** The first bytes of the files read last, by SHA-256 (see HEADS_KEPT). */
  private readonly heads = new Heads();

  private constructor(
    private readonly store: SnapshotStore,
    readonly snapshotId: string,
  ) {}

  /** The tree of `manifest`'s snapshot, whose checked table of contents is `contents`; DATA_LOSS when it names what no tree can hold. */
  static of(store: SnapshotStore, manifest: Manifest, contents: Contents): SnapshotTree {
    const cached = built.get(contents);
    if (cached) return cached;
    const tree = new SnapshotTree(store, manifest.id);
    tree.build(manifest, contents);
    built.set(contents, tree);
    return tree;
  }

  /** The tree as a read source for one call: its store reads end when `signal` aborts. */
  source(signal?: AbortSignal): ReadSource {
    return {
      stat: async (parts) => this.stat(parts),
      openFile: async (parts) => this.openFile(parts, signal),
      walk: (parts, options) => this.walk(parts, options, signal),
    };
  }

  private build(manifest: Manifest, contents: Contents): void {
    const createdNs = BigInt(Date.parse(manifest.createdAt)) * 1_000_000n;
    this.nodes.set("/", { entry: this.entry("/", "directory", 0n, ROOT_MODE, createdNs, "/"), children: [] });
    const { directories } = contents;
    for (let i = 0; i < directories.paths.length; i++) {
      const path = directories.paths[i]!;
      this.add(path, { entry: this.entry(path, "directory", 0n, directories.modes[i]!, seconds(directories.mtimes[i]!), path), children: [] });
    }
    const chunks = chunksByFile(contents);
    let i = 0;
    for (const record of recordsOf(contents.files)) {
      const mtime = seconds(contents.mtimes[i]!);
      if (record.type === "file") {
        const content = { chunks: chunks[i]!, sha256: record.sha256 };
        this.add(record.path, { entry: this.entry(record.path, "file", BigInt(record.size), record.mode, mtime, record.sha256), content });
      } else {
        const size = BigInt(bytesOfName(record.target).length);
        this.add(record.path, { entry: this.entry(record.path, "symlink", size, 0o777, mtime, `${record.path}\0${record.target}`), target: record.target });
      }
      i++;
    }
    const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
    for (const node of this.nodes.values()) node.children?.sort(byName);
  }

  /** Adds an entry below the directory that holds it; DATA_LOSS for a path no request could name, a second entry of one name, or a parent it does not list. */
  private add(path: string, node: Node): void {
    const damaged = (problem: string): never => fail("DATA_LOSS", `the table of contents of snapshot ${this.snapshotId} ${problem}; nothing of it is served`);
    let parts: Components;
    try {
      parts = parsePath(path);
    } catch {
      return damaged(`names an invalid path ${JSON.stringify(path.slice(0, 100))}`);
    }
    if (parts.length === 0 || displayPath(parts) !== path) damaged(`names an invalid path ${JSON.stringify(path.slice(0, 100))}`);
    if (this.nodes.has(path)) damaged(`names ${path.slice(0, 200)} twice`);
    const siblings = this.nodes.get(displayPath(parts.slice(0, -1)))?.children;
    if (!siblings) return damaged(`names ${path.slice(0, 200)} without the directory that holds it`);
    siblings.push(parts.at(-1)!);
    this.nodes.set(path, node);
  }

  private entry(path: string, type: EntryType, size: bigint, mode: number, mtimeNs: bigint, identity: string): Entry {
    return {
      path,
      name: path === "/" ? "" : path.slice(path.lastIndexOf("/") + 1),
      escaped: path.includes("\\"),
      type,
      size,
      mode,
      mtimeNs,
      ctimeNs: mtimeNs,
      // Never a live version (those are 16 hex digits): a mutation given it as if_version is refused.
      version: `snapshot:${hash("sha256", `${this.snapshotId}\0${identity}`, "hex").slice(0, 16)}`,
    };
  }

  private stat(parts: Components): Entry {
    const node = this.resolve(parts, false);
    if (namesDirectory(parts) && node.entry.type !== "directory") fail("NOT_A_DIRECTORY", `${displayPath(parts)} is not a directory`);
    return parts.length === 0 ? node.entry : { ...node.entry, path: displayPath(parts), name: escapeName(parts.at(-1)!) };
  }

  private openFile(parts: Components, signal?: AbortSignal): ReadableFile {
    const shown = displayPath(parts);
    if (parts.length === 0) fail("IS_A_DIRECTORY", "/ is a directory");
    const node = this.resolve(parts, true);
    if (node.entry.type === "directory") fail("IS_A_DIRECTORY", `${shown} is a directory`);
    if (namesDirectory(parts)) fail("NOT_A_DIRECTORY", `${shown} is not a directory`);
    return new SnapshotFile(this.store, { ...node.entry, path: shown, name: escapeName(parts.at(-1)!) }, node.content!, this.heads, signal);
  }

  /**
   * The node at `parts`, following links on the way (and at the end when
   * `followLast`), lexically inside the tree. NOT_FOUND, NOT_A_DIRECTORY,
   * PATH_ESCAPES_WORKSPACE, INVALID_PATH (a loop) as the live resolver.
   */
  private resolve(parts: Components, followLast: boolean): Node {
    const shown = displayPath(parts);
    let pending = parts;
    let links = 0;
    restart: for (;;) {
      let node = this.nodes.get("/")!;
      for (let i = 0; i < pending.length; i++) {
        const here = displayPath(pending.slice(0, i + 1));
        if (node.entry.type !== "directory") fail("NOT_A_DIRECTORY", `${displayPath(pending.slice(0, i))} is not a directory`);
        const next = this.nodes.get(here);
        if (!next) fail("NOT_FOUND", `${shown} does not exist at snapshot ${this.snapshotId}`);
        const last = i === pending.length - 1;
        if (next.target !== undefined && (!last || followLast)) {
          if (++links > MAX_SYMLINKS) fail("INVALID_PATH", `too many symbolic links at ${here}`);
          pending = splice(pending.slice(0, i), here, next.target, pending.slice(i + 1));
          continue restart;
        }
        node = next;
      }
      return node;
    }
  }

  /** Entries below a directory as the live walk gives them (walk.ts): names sorted, a directory before its contents, links not followed. */
  private async *walk(parts: Components, options: WalkRequest, signal?: AbortSignal): AsyncGenerator<Entry> {
    const start = this.resolve(parts, true);
    if (start.entry.type !== "directory") fail("NOT_A_DIRECTORY", `${displayPath(parts)} is not a directory`);
    const gitignore = async (dir: Node, at: Components, parent: IgnoreLevel | null): Promise<IgnoreLevel | null> => {
      const file = this.nodes.get(childPath(dir.entry.path, ".gitignore"));
      // As live: a lone regular file of at most 1 MiB (a link named .gitignore is not followed).
      if (!file?.content || file.entry.size > BigInt(MAX_GITIGNORE_BYTES)) return parent;
      const opened = new SnapshotFile(this.store, file.entry, file.content, this.heads, signal);
      try {
        return ignoreLevel(at, gitignoreRules((await opened.readAt(0, opened.size)).toString("utf8")), parent);
      } finally {
        opened.close();
      }
    };
    let levels: IgnoreLevel | null = null;
    if (options.respectGitignore) {
      for (let i = 0; i < parts.length; i++) {
        const dir = this.tryResolve(parts.slice(0, i));
        if (dir?.children) levels = await gitignore(dir, parts.slice(0, i), levels);
      }
    }
    interface Visit {
      node: Node;
      parts: Components;
      depth: number;
      levels: IgnoreLevel | null;
      /** The levels' rules as this directory's entries are tested (forDirectory, once per directory as live). */
      tested: IgnoreTest[];
      next: number;
    }
    const visit = async (node: Node, at: Components, depth: number, above: IgnoreLevel | null): Promise<Visit> => {
      const levels = options.respectGitignore ? await gitignore(node, at, above) : null;
      return { node, parts: at, depth, levels, tested: options.respectGitignore ? forDirectory(levels) : [], next: 0 };
    };
    const stack: Visit[] = [await visit(start, parts, 1, levels)];
    while (stack.length > 0) {
      const current = stack.at(-1)!;
      const names = current.node.children!;
      if (current.next === names.length) {
        stack.pop();
        continue;
      }
      const name = names[current.next++]!;
      if (!options.includeHidden && name.startsWith(".")) continue;
      const child = this.nodes.get(childPath(current.node.entry.path, name))!;
      const at = [...current.parts, name];
      const path = displayPath(at);
      const isDirectory = child.entry.type === "directory";
      if (options.respectGitignore && isIgnored(current.tested, path, name, isDirectory)) continue;
      yield path === child.entry.path ? child.entry : { ...child.entry, path };
      if (isDirectory && options.recursive && (options.maxDepth === 0 || current.depth < options.maxDepth)) {
        stack.push(await visit(child, at, current.depth + 1, current.levels));
      }
    }
  }

  private tryResolve(parts: Components): Node | undefined {
    try {
      return this.resolve(parts, true);
    } catch (error) {
      if (error instanceof FileToolsError) return undefined;
      throw error;
    }
  }
}

/** Replaces the link at `here` (in directory `dir`) by its target within the path; PATH_ESCAPES_WORKSPACE when that leaves the tree. */
function splice(dir: Components, here: string, target: string, rest: Components): Components {
  const escapes = (): never => fail("PATH_ESCAPES_WORKSPACE", `symbolic link ${here} points outside the workspace`);
  if (target.startsWith("/")) escapes();
  try {
    return [...joinComponents(dir, target), ...rest];
  } catch {
    return escapes();
  }
}

/** The first BINARY_HEAD_BYTES of files, by SHA-256, the last HEADS_KEPT used. */
class Heads {
  private readonly kept = new Map<string, Buffer>();

  get(sha256: string): Buffer | undefined {
    const head = this.kept.get(sha256);
    if (head) {
      this.kept.delete(sha256);
      this.kept.set(sha256, head);
    }
    return head;
  }

  set(sha256: string, firstChunk: Buffer): void {
    this.kept.delete(sha256);
    this.kept.set(sha256, Buffer.from(firstChunk.subarray(0, BINARY_HEAD_BYTES)));
    if (this.kept.size > HEADS_KEPT) this.kept.delete(this.kept.keys().next().value!);
  }
}

function childPath(directory: string, name: string): string {
  return directory === "/" ? `/${escapeName(name)}` : `${directory}/${escapeName(name)}`;
}

function seconds(value: number): bigint {
  return BigInt(value) * 1_000_000_000n;
}

/**
 * A file of a snapshot, read by chunks: a read fetches only the chunks that
 * cover it (the last one read is kept, so reads within a chunk fetch it
 * once); a stream from the start checks the whole file's SHA-256 at its end.
 * close() ends the reads still in flight.
 */
class SnapshotFile implements ReadableFile {
  readonly size: number;
  readonly sha256: string;
  /** Offset in the file of each chunk's first byte. */
  private readonly starts: number[] = [];
  private cached?: { index: number; bytes: Buffer };
  private readonly closing = new AbortController();
  private readonly signal: AbortSignal;

  constructor(
    private readonly store: SnapshotStore,
    readonly entry: Entry,
    private readonly content: { chunks: ChunkRef[]; sha256: string },
    private readonly heads: Heads,
    signal?: AbortSignal,
  ) {
    this.size = Number(entry.size);
    this.sha256 = content.sha256;
    let start = 0;
    for (const chunk of content.chunks) {
      this.starts.push(start);
      start += chunk.size;
    }
    this.signal = signal ? AbortSignal.any([signal, this.closing.signal]) : this.closing.signal;
  }

  async readAt(position: number, length: number): Promise<Buffer> {
    const buffer = Buffer.allocUnsafe(Math.max(0, Math.min(length, this.size - position)));
    return buffer.subarray(0, await this.readInto(buffer, position));
  }

  async readInto(buffer: Buffer, position: number): Promise<number> {
    const end = Math.min(this.size, position + buffer.length);
    if (position >= end) return 0;
    const head = this.heads.get(this.sha256);
    if (head && end <= head.length) return head.copy(buffer, 0, position, end);
    let filled = 0;
    for await (const { index, bytes } of this.chunkRange(this.chunkAt(position), this.chunkAt(end - 1) + 1, 1)) {
      const start = this.starts[index]!;
      filled += bytes.copy(buffer, filled, Math.max(position, start) - start, Math.min(end, start + bytes.length) - start);
    }
    return filled;
  }

  async *chunks(position = 0, chunkBytes = STREAM_CHUNK_BYTES): AsyncGenerator<Buffer> {
    const whole = position === 0 ? new WholeFileCheck({ path: this.entry.path, ...this.content }) : undefined;
    if (position < this.size) {
      for await (const { index, bytes } of this.chunkRange(this.chunkAt(position), this.content.chunks.length, READS_AHEAD)) {
        whole?.add(bytes);
        for (let offset = Math.max(0, position - this.starts[index]!); offset < bytes.length; offset += chunkBytes) yield bytes.subarray(offset, offset + chunkBytes);
      }
    }
    whole?.end();
  }

  async currentVersion(): Promise<string> {
    return this.entry.version; // a snapshot never changes
  }

  close(): void {
    this.closing.abort();
    this.cached = undefined;
  }

  /** Chunks `from` to `to` (exclusive): the one kept from the last read, then the rest by ranged reads, `ahead` at a time. */
  private async *chunkRange(from: number, to: number, ahead: number): AsyncGenerator<{ index: number; bytes: Buffer }> {
    // Not every store's read honours the signal (a local positional read): checked here too.
    this.signal.throwIfAborted();
    let index = from;
    if (this.cached?.index === index) yield { index: index++, bytes: this.cached.bytes };
    if (index >= to) return;
    for await (const bytes of fileChunks(this.store, this.content.chunks, this.size, { from: index, to, ahead }, this.signal)) {
      this.signal.throwIfAborted();
      this.cached = { index, bytes };
      if (index === 0) this.heads.set(this.sha256, bytes);
      yield { index: index++, bytes };
    }
  }

  /** The chunk holding byte `position`. */
  private chunkAt(position: number): number {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.starts[middle]! <= position) low = middle;
      else high = middle - 1;
    }
    return low;
  }
}
