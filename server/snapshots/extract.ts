// Extraction of an untrusted tarball (plain or gzip) into a staging directory
// (SPEC 4.2, shared/notes/security.md 2.3). Strict: the first refused member
// fails the whole extraction with UNSAFE_ARCHIVE, and the caller discards the
// staging directory, so a refused archive changes nothing. Only directories,
// regular files, symbolic links whose target stays inside and hard links to an
// earlier regular file of the same archive are accepted. Symbolic links are
// created last, and the staging module never opens a path through a link.
// Files, links and directories take the mtimes their members record (to the
// second: a ustar header's, a table of contents'), directories once the
// whole tree is staged; a hard link shares its file's.
import type { Usage } from "../workspace/usage.js";
import { Readable, Transform, Writable, pipeline } from "node:stream";
import { createGunzip } from "node:zlib";
import tar from "tar-stream";
import { fail, FileToolsError } from "../errors.js";
import { errnoOf, translateErrno } from "../workspace/errno.js";
import type { Staging, TreeEntry } from "../workspace/staging.js";
import { MAX_CONTENT_BYTES, MAX_DEPTH, MAX_ENTRIES, MAX_PATH_BYTES, MAX_SYMLINK_TARGET_BYTES, MAX_COMPONENT_BYTES } from "../workspace/limits.js";
import { byteLengthOfName, nameFromBytes } from "../workspace/names.js";
import { displayPath } from "../workspace/paths.js";
import { ArchiveProblem, problemError, TarGuard } from "./tar-guard.js";

/** The caps on an archive, in one place (README "Snapshots"). */
export interface ExtractLimits {
  /** Total bytes of regular-file content. */
  maxBytes: number;
  /** Members of any kind. */
  maxMembers: number;
  /** Components in a member name. */
  maxDepth: number;
  /** Bytes in a member's path, its components joined by "/" (one component: 255). */
  maxNameBytes: number;
  /** Bytes in a symbolic link's target (Linux refuses 4096 and more). */
  maxLinkTargetBytes: number;
  /** A gzip archive may expand to at most this many times its compressed size... */
  maxExpansionRatio: number;
  /** ...once it has expanded past this many bytes (smaller archives are never refused for their ratio). */
  ratioFloorBytes: number;
}

/** Files up to this size are collected in memory and written with synchronous calls. */
const SMALL_FILE_BYTES = 1 << 20;

/** Output per inflate call on the thread pool (the default 16 KiB costs a main-thread round trip each). */
const INFLATE_CHUNK_BYTES = 1 << 20;
const INFLATE_AHEAD_BYTES = 8 << 20;
/** Symbolic links followed while resolving one link's target (the kernel's limit). */
const MAX_LINK_HOPS = 40;

/** The tree limits of workspace/limits.ts (what the API can create and the packer stores, a restore accepts), and the archive's own caps. */
export const DEFAULT_LIMITS: ExtractLimits = {
  maxBytes: MAX_CONTENT_BYTES,
  maxMembers: MAX_ENTRIES,
  maxDepth: MAX_DEPTH,
  maxNameBytes: MAX_PATH_BYTES,
  maxLinkTargetBytes: MAX_SYMLINK_TARGET_BYTES,
  // Source trees gzip 3-10x, logs up to ~100x; DEFLATE's ceiling is ~1030x (zeros).
  maxExpansionRatio: 200,
  ratioFloorBytes: 256 * 1024 ** 2,
};

/**
 * A member's name or link target as a held name (workspace/names.ts). The
 * extractor reads ustar and GNU long names as latin1, one character a byte,
 * so their exact bytes come back here; pax values are UTF-8 text already.
 */
function heldName(raw: string, fromPax: boolean): string {
  return fromPax ? raw : nameFromBytes(Buffer.from(raw, "latin1"));
}

/** The extractor of this module's name reading (latin1: see heldName). */
export function nameExactExtract(): tar.Extract {
  // (filenameEncoding is an option of tar-stream's Extract its type declarations leave out.)
  return tar.extract({ filenameEncoding: "latin1" } as Parameters<typeof tar.extract>[0]);
}

/** A member's name and link target as held names (empty when it has none). */
export function heldMemberNames(header: tar.Header): { name: string; linkname: string } {
  const pax = (header.pax ?? {}) as Record<string, string | undefined>;
  return {
    name: heldName(header.name, pax.path !== undefined),
    linkname: header.linkname ? heldName(header.linkname, pax.linkpath !== undefined) : "",
  };
}

/**
 * How an archive's damage (truncation, a bad checksum, broken gzip) is
 * reported: a client's archive is UNSAFE_ARCHIVE, a stored snapshot DATA_LOSS.
 * What the archive says that is refused is UNSAFE_ARCHIVE either way.
 */
export type DamagedReason = "UNSAFE_ARCHIVE" | "DATA_LOSS";

export interface ExtractOptions {
  limits: ExtractLimits;
  damaged: DamagedReason;
  /** Told the totals read so far, before each member is staged (a quota check: it throws to stop the archive). */
  staged?: (usage: Usage) => void;
  /**
   * The most bytes the archive may inflate to, when what it holds is known
   * (a stored snapshot: what its manifest accounts for); past them it is
   * refused at once, as a bomb. Replaces the expansion ratio cap.
   */
  maxInflatedBytes?: number;
}

export interface ExtractResult {
  fileCount: number;
  sizeBytes: number;
}

/** What extraction staged: its counts, and what it needs to check its links against the tree it merges into. */
export interface StagedArchive extends ExtractResult {
  /**
   * Refuses (UNSAFE_ARCHIVE) the merge of the staging tree into directory
   * `into` (workspace components, links resolved) of a tree that `existing`
   * describes, when one of the archive's symbolic links would resolve outside
   * `into`, or one of the workspace's own links (`links`: where, and its
   * target) that stays within the workspace, or within `into`, would no
   * longer (an archive's `e -> .` under a link `y -> e/..`). See staysWithin.
   */
  checkLinks(links: AsyncIterable<{ at: string[]; target: string }>, existing: (parts: readonly string[]) => TreeEntry, into: readonly string[]): Promise<void>;
}

function unsafe(message: string): never {
  fail("UNSAFE_ARCHIVE", message);
}

/** Splits and checks a member name or hard-link target; [] for the archive root ("./"). */
export function memberParts(raw: string, limits: ExtractLimits): string[] {
  const shown = JSON.stringify(raw.length > 120 ? raw.slice(0, 120) + "…" : raw);
  // A leading "./" and a directory's trailing "/" are not part of the path the limit counts.
  if (byteLengthOfName(raw) > limits.maxNameBytes + 3) unsafe(`archive member name longer than ${limits.maxNameBytes} bytes`);
  if (raw.startsWith("/")) unsafe(`archive member ${shown} has an absolute name`);
  // A backslash is an ordinary byte of a POSIX name (the API creates such names; only "/" separates).
  if (/[\u0000-\u001f\u007f]/.test(raw)) unsafe(`archive member ${shown} has a control character in its name`);
  if (/^[a-zA-Z]:/.test(raw)) unsafe(`archive member ${shown} has a drive-letter name`);
  const parts: string[] = [];
  for (const part of raw.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") unsafe(`archive member ${shown} contains ".."`);
    if (byteLengthOfName(part) > MAX_COMPONENT_BYTES) unsafe(`archive member ${shown} has a component longer than ${MAX_COMPONENT_BYTES} bytes`);
    parts.push(part);
  }
  if (parts.length > limits.maxDepth) unsafe(`archive member ${shown} is deeper than ${limits.maxDepth} levels`);
  if (parts.reduce((bytes, part) => bytes + byteLengthOfName(part), Math.max(0, parts.length - 1)) > limits.maxNameBytes) {
    unsafe(`archive member name longer than ${limits.maxNameBytes} bytes`);
  }
  return parts;
}

/**
 * Resolves a symbolic link's target the way the kernel would, component by
 * component, following every link `entryAt` reports (the archive's own, and
 * the tree's it lands in); false when it leaves the directory `within`
 * ([] the root) at any step. A name that is absent or not a directory is
 * taken as a directory: it may become one later, and a `..` after it must
 * not then escape.
 *
 * What "stays in its directory" means for an import: a link may lead to the
 * import directory itself or below it, never out of it, not even to come
 * back (`../dir/x` from `dir`), nor through a link that leaves it or has an
 * absolute target, whatever earlier imports, restores, calls or a shell left
 * there; as RESOLVE_BENEATH does, so where it leads depends on nothing
 * outside that directory. At the root this is the workspace's own rule.
 */
function staysWithin(linkAt: readonly string[], target: string, entryAt: (parts: readonly string[]) => TreeEntry, within: readonly string[]): boolean {
  const out = linkAt.slice(0, -1);
  // Components still to walk, last first (pop is cheap).
  const pending = target.split("/").reverse();
  let hops = MAX_LINK_HOPS;
  while (pending.length > 0) {
    const part = pending.pop()!;
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length <= within.length) return false;
      out.pop();
      continue;
    }
    out.push(part);
    const entry = entryAt(out);
    if (entry.kind === "outside") return false;
    if (entry.kind === "link") {
      if (--hops < 0) return false;
      out.pop();
      if (entry.fromRoot) {
        if (within.length > 0) return false;
        out.length = 0;
      }
      pending.push(...entry.target.split("/").reverse());
    }
  }
  return true;
}

/** Whether `parts` is the directory `dir` or below it. */
function isUnder(parts: readonly string[], dir: readonly string[]): boolean {
  return parts.length >= dir.length && dir.every((part, i) => parts[i] === part);
}

/** Archive links as the resolver sees them: relative targets only (absolute ones are refused on sight). */
function archiveEntry(links: ReadonlyMap<string, string>, name: string): TreeEntry {
  const target = links.get(name);
  return target === undefined ? { kind: "absent" } : { kind: "link", target, fromRoot: false };
}

/** Where pass 1 keeps the archive for pass 2: its bytes as they came, or the plain tar (decompressed, so pass 2 need not inflate it again). */
export interface KeptArchive {
  form: "as-received" | "plain-tar";
  write(bytes: Uint8Array): Promise<void>;
}

/**
 * Pass 1: reads the whole archive through the guard, creating nothing, so a
 * bomb or a malformed archive is refused at reading speed (before a million
 * empty files are created, say), handing it to `keep` on the way. Throws
 * UNSAFE_ARCHIVE, or `damaged` for a cut-off one.
 */
export async function inspectArchive(source: AsyncIterable<Uint8Array>, options: ExtractOptions, keep?: KeptArchive): Promise<void> {
  const plain = keep?.form === "plain-tar" ? keep : undefined;
  const sink = new Writable({
    write: (chunk: Buffer, _encoding, callback) => {
      if (plain) plain.write(chunk).then(() => callback(), callback);
      else callback();
    },
  });
  try {
    await decode(source, options, sink, keep?.form === "as-received" ? (chunk) => keep.write(chunk) : undefined);
  } catch (error) {
    throw asArchiveError(error, options.damaged);
  }
}

/** A member as an archive gives it, with a file's content (taken whole before the next member is asked for). */
export interface ArchiveMember {
  /** tar-stream's member types ("file", "directory", "symlink", "link", …). */
  type: string;
  /** Held names (workspace/names.ts). */
  name: string;
  linkname: string;
  size: number;
  mode: number;
  /** Seconds since the epoch. */
  mtime: number;
  content?: AsyncIterable<Uint8Array>;
}

/**
 * Pass 2: extracts `source` into `staging`; throws UNSAFE_ARCHIVE (or
 * `damaged`, or the I/O error) on the first problem. Links are checked
 * against the archive's own links here; StagedArchive.checkLinksAgainst
 * checks them against the tree they will land in.
 */
export async function extractArchive(source: AsyncIterable<Uint8Array>, staging: Staging, options: ExtractOptions): Promise<StagedArchive> {
  const extract = nameExactExtract();
  // Each member's time as the guard read it, in the order tar-stream emits them.
  const mtimes: number[] = [];
  const done = decode(source, options, extract, undefined, mtimes).then(
    () => null,
    (error: unknown) => error,
  );
  async function* members(): AsyncGenerator<ArchiveMember> {
    for await (const entry of extract) {
      const { header } = entry;
      const isFile = header.type === "file" || header.type === "contiguous-file";
      if (!isFile) entry.resume();
      yield { ...heldMemberNames(header), type: isFile ? "file" : String(header.type), size: header.size ?? 0, mode: header.mode ?? (isFile ? 0o644 : 0o755), mtime: mtimeOf(mtimes.shift()), content: isFile ? (entry as AsyncIterable<Uint8Array>) : undefined };
    }
    const streamError = await done;
    if (streamError) throw streamError;
  }
  try {
    return await stageMembers(members(), staging, options);
  } catch (error) {
    extract.destroy();
    const streamError = await done;
    // The stream's error explains a member cut short; a file system error of our own (a full disk) is the cause itself.
    const own = error instanceof FileToolsError || (error as NodeJS.ErrnoException | null)?.syscall !== undefined;
    throw asArchiveError(own || !streamError ? error : streamError, options.damaged);
  }
}

/**
 * A member of a tree known whole before any of it is written (a snapshot's
 * table of contents, seekable-read.ts): no hard links, and no name twice
 * nor below a file or link (membersOf refuses those: its files are written
 * in parallel, in no set order).
 */
export interface TreeMemberToStage {
  header: {
    type: "directory" | "file" | "symlink";
    /** Held names (workspace/names.ts). */
    name: string;
    linkname?: string;
    size: number;
    mode: number;
    /** Seconds since the epoch. */
    mtime: number;
  };
}

/** A regular file of such a tree, checked: where it goes in the staging directory, with which permission bits. */
export interface FileToStage<M> {
  member: M;
  parts: string[];
  mode: number;
}

/**
 * Pass 2 for a tree known whole (a snapshot's table of contents,
 * seekable-read.ts): every member is checked by the same rules first, and
 * its directories made; only then does `stageFiles` write the files (in
 * parallel, in the gzip workers), then the symbolic links are made. The
 * same errors as extractArchive.
 */
export async function extractTree<M extends TreeMemberToStage>(
  members: readonly M[],
  staging: Staging,
  options: ExtractOptions,
  stageFiles: (files: FileToStage<M>[]) => Promise<void>,
): Promise<StagedArchive> {
  const rules = new MemberRules(options);
  try {
    try {
      const files: FileToStage<M>[] = [];
      for (const member of members) {
        const { header } = member;
        const { parts, mode } = rules.admit({ ...header, linkname: header.linkname ?? "" });
        if (header.type === "directory" && parts.length > 0) await staging.mkdir(parts, header.mode);
        else if (header.type === "file") files.push({ member, parts, mode });
      }
      await stageFiles(files);
      await rules.makeLinks(staging);
      staging.setDirectoryTimes(rules.directoryTimes());
    } finally {
      await staging.release();
    }
  } catch (error) {
    throw asArchiveError(error, options.damaged);
  }
  return rules.staged();
}

/** Stages `source`'s members one by one under the archive rules, then its symbolic links; what it throws is as raised. */
async function stageMembers(source: AsyncIterable<ArchiveMember>, staging: Staging, options: ExtractOptions): Promise<StagedArchive> {
  const rules = new MemberRules(options);
  try {
    for await (const member of source) {
      const { parts, mode, linkTarget } = rules.admit(member);
      switch (member.type) {
        case "directory":
          if (parts.length > 0) await staging.mkdir(parts, member.mode);
          break;
        case "file": {
          const content = member.content ?? noContent();
          if (member.size <= SMALL_FILE_BYTES) {
            const chunks: Buffer[] = [];
            for await (const chunk of content as AsyncIterable<Buffer>) chunks.push(chunk);
            await staging.writeSmallFile(parts, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), mode, member.mtime);
          } else {
            await staging.writeFile(parts, content, mode, member.mtime);
          }
          break;
        }
        case "link":
          await staging.link(parts, linkTarget!);
          break;
      }
    }
    await rules.makeLinks(staging);
    staging.setDirectoryTimes(rules.directoryTimes());
  } finally {
    await staging.release();
  }
  return rules.staged();
}

async function* noContent(): AsyncGenerator<Uint8Array> {}

/**
 * A member's mtime in seconds, from its header's time field as the guard
 * read it (tar-stream reads a negative base-256 one a second late, -1 as 0);
 * now when it has none a file system takes (past a Date's range).
 */
function mtimeOf(seconds: number | undefined): number {
  return seconds !== undefined && Math.abs(seconds) <= MAX_DATE_SECONDS ? seconds : Date.now() / 1000;
}

/** The last second a Date holds, either side of the epoch. */
const MAX_DATE_SECONDS = 8.64e12;

/**
 * The archive rules, member by member, in archive order: names, depth,
 * counts, sizes, what may replace what, hard links to earlier files only,
 * symbolic links within the archive. No I/O but the quota's check
 * (options.staged) and the symbolic links made at the end.
 */
class MemberRules {
  private readonly files = new Set<string>();
  /** Directories the staged tree holds: explicit members and every member's parents. */
  private readonly dirs = new Set<string>();
  private readonly links = new Map<string, string>();
  private readonly pendingLinks: Array<{ parts: string[]; target: string; mtime: number }> = [];
  /** The mtime of each directory member, by name (a directory named twice: its last). */
  private readonly directoryMtimes = new Map<string, { parts: string[]; mtime: number }>();
  private members = 0;
  private sizeBytes = 0;
  /** Regular files admitted (hard links not counted). */
  private fileCount = 0;

  constructor(private readonly options: ExtractOptions) {}

  /**
   * Refuses (UNSAFE_ARCHIVE) a member the rules do not allow after the
   * members before it; its components, a file's permission bits as staged,
   * a hard link's target. The quota hears the totals first: the member that
   * would pass it is never written.
   */
  admit(member: Omit<ArchiveMember, "content">): { parts: string[]; mode: number; linkTarget?: string[] } {
    const { limits } = this.options;
    const { files, dirs, links } = this;
    if (++this.members > limits.maxMembers) unsafe(`archive has more than ${limits.maxMembers} members`);
    const parts = memberParts(member.name, limits);
    const name = parts.join("/");
    // Only the archive's own links, read so far, can be in the way: none, nothing to check.
    for (let i = 1; links.size > 0 && i < parts.length; i++) {
      if (links.has(parts.slice(0, i).join("/"))) unsafe(`archive member ${name} goes through the symbolic link ${parts.slice(0, i).join("/")}`);
    }
    this.addParents(name, member.type === "directory");
    const isFile = member.type === "file";
    this.options.staged?.({ bytes: this.sizeBytes + (isFile ? member.size : 0), entries: dirs.size + files.size + links.size + (member.type === "directory" ? 0 : 1) });
    switch (member.type) {
      case "directory":
        if (parts.length > 0) this.directoryMtimes.set(name, { parts, mtime: member.mtime });
        return { parts, mode: member.mode };
      case "file": {
        if (parts.length === 0) unsafe("archive file member names the extraction root");
        if (links.has(name)) unsafe(`archive member ${name} replaces a symbolic link`);
        this.sizeBytes += member.size;
        if (this.sizeBytes > limits.maxBytes) unsafe(`archive holds more than ${limits.maxBytes} bytes`);
        files.add(name);
        this.fileCount++;
        // Owner bits kept, group/other write and set-uid/set-gid/sticky dropped.
        return { parts, mode: (member.mode & 0o755) | 0o600 };
      }
      case "symlink": {
        const target = member.linkname;
        if (parts.length === 0) unsafe("archive symbolic link names the extraction root");
        if (target === "" || target.startsWith("/") || target.includes("\0")) unsafe(`archive symbolic link ${name} has an absolute or empty target`);
        if (byteLengthOfName(target) > limits.maxLinkTargetBytes) unsafe(`archive symbolic link ${name} has a target longer than ${limits.maxLinkTargetBytes} bytes`);
        if (files.has(name)) unsafe(`archive symbolic link ${name} replaces a file`);
        if (dirs.has(name)) unsafe(`archive symbolic link ${name} replaces a directory`);
        if (links.has(name)) unsafe(`archive has two symbolic links named ${name}`);
        links.set(name, target);
        this.pendingLinks.push({ parts, target, mtime: member.mtime });
        return { parts, mode: 0o777 };
      }
      case "link": {
        const linkTarget = memberParts(member.linkname, limits);
        if (!files.has(linkTarget.join("/"))) unsafe(`archive hard link ${name} points outside the archive or at a non-file`);
        if (links.has(name)) unsafe(`archive member ${name} replaces a symbolic link`);
        files.add(name);
        return { parts, mode: 0, linkTarget };
      }
      default:
        unsafe(`archive member ${name} is a ${member.type}, which is refused`);
    }
  }

  /** Refuses a symbolic link that resolves outside through the archive's own, then makes them all (last: nothing is written through one). */
  async makeLinks(staging: Staging): Promise<void> {
    for (const link of this.pendingLinks) {
      if (!staysWithin(link.parts, link.target, (at) => archiveEntry(this.links, at.join("/")), [])) unsafe(`archive symbolic link ${link.parts.join("/")} points outside`);
    }
    for (const link of this.pendingLinks) await staging.symlink(link.parts, link.target, link.mtime);
  }

  /** The directory members' mtimes, to set once everything in them is staged. */
  directoryTimes(): Iterable<{ parts: string[]; mtime: number }> {
    return this.directoryMtimes.values();
  }

  /** What was staged, for the merge (see StagedArchive). */
  staged(): StagedArchive {
    const { files, dirs, links, pendingLinks } = this;
    const stagedEntry = (rel: string): TreeEntry | undefined => {
      if (rel === "" || dirs.has(rel)) return { kind: "directory" };
      if (files.has(rel)) return { kind: "other" };
      const target = links.get(rel);
      return target === undefined ? undefined : { kind: "link", target, fromRoot: false };
    };
    /** The staged entry at workspace path `at` when the staging tree lands in `into`; undefined when it has none there. */
    const stagedAt = (at: readonly string[], into: readonly string[]): TreeEntry | undefined => (isUnder(at, into) ? stagedEntry(at.slice(into.length).join("/")) : undefined);
    return {
      fileCount: this.fileCount,
      sizeBytes: this.sizeBytes,
      async checkLinks(existingLinks, existing, into) {
        if (pendingLinks.length === 0) return;
        // What the merged tree will hold: the staged entry where there is one, else the existing one.
        const merged = (at: readonly string[]) => stagedAt(at, into) ?? existing(at);
        const where = into.length === 0 ? "the workspace" : `the import directory ${displayPath(into)}`;
        for (const link of pendingLinks) {
          if (!staysWithin([...into, ...link.parts], link.target, merged, into)) unsafe(`archive symbolic link ${link.parts.join("/")} points outside ${where} through what is already there`);
        }
        for await (const link of existingLinks) {
          // Absolute targets are outside or name the root directly: the archive does not change them.
          if (link.target.startsWith("/") || stagedAt(link.at, into) !== undefined) continue;
          // A link in the import directory is held to it as well as to the workspace.
          for (const within of isUnder(link.at, into) && into.length > 0 ? [into, []] : [[]]) {
            if (staysWithin(link.at, link.target, existing, within) && !staysWithin(link.at, link.target, merged, within)) {
              unsafe(`the archive's symbolic links would make the link ${displayPath(link.at)} already in the workspace point outside ${within.length === 0 ? "the workspace" : where}`);
            }
          }
        }
      },
    };
  }

  /** Adds the member's directories, deepest first, down to one already there (whose own are then too): one path a member, mostly. */
  private addParents(name: string, self: boolean): void {
    const { dirs } = this;
    for (let dir = self ? name : name.slice(0, Math.max(0, name.lastIndexOf("/"))); dir !== "" && !dirs.has(dir); dir = dir.slice(0, Math.max(0, dir.lastIndexOf("/")))) dirs.add(dir);
  }
}

/**
 * Streams `source` (gzip or plain tar) through the guard into `sink`, counting
 * compressed and expanded bytes for the ratio cap. Every stream's error ends
 * here, in the promise.
 */
async function decode(source: AsyncIterable<Uint8Array>, options: ExtractOptions, sink: Writable | tar.Extract, onRaw?: (chunk: Uint8Array) => Promise<void>, mtimes?: number[]): Promise<void> {
  const { limits } = options;
  const { first, rest } = await peek(source);
  const gzipped = first.length >= 2 && first[0] === 0x1f && first[1] === 0x8b;
  let compressed = 0;
  let expanded = 0;
  const guard = new TarGuard(limits, mtimes);
  async function* counted(): AsyncGenerator<Uint8Array> {
    for await (const chunk of rest) {
      compressed += chunk.length;
      if (onRaw) await onRaw(chunk);
      yield chunk;
    }
  }
  const guarding = new Transform({
    // Room for the inflater to run ahead while the main thread creates files.
    highWaterMark: INFLATE_AHEAD_BYTES,
    transform(chunk: Buffer, _encoding, callback) {
      try {
        expanded += chunk.length;
        if (options.maxInflatedBytes !== undefined) {
          if (expanded > options.maxInflatedBytes) throw new ArchiveProblem("refused", `the archive expands past the ${options.maxInflatedBytes} bytes its manifest accounts for (a compression bomb)`);
        } else if (gzipped && expanded > limits.ratioFloorBytes && expanded > compressed * limits.maxExpansionRatio) {
          throw new ArchiveProblem("refused", `the archive expands more than ${limits.maxExpansionRatio} times (a compression bomb)`);
        }
        guard.write(chunk);
        // Headers declare their members' sizes: a quota is told as soon as they are read.
        options.staged?.({ bytes: guard.contentBytes, entries: guard.members });
        callback(null, chunk);
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback) {
      try {
        guard.end();
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
  });
  const input = Readable.from(counted());
  const streams = gzipped ? [input, createGunzip({ chunkSize: INFLATE_CHUNK_BYTES }), guarding, sink] : [input, guarding, sink];
  await new Promise<void>((resolve, reject) => {
    (pipeline as (...args: unknown[]) => void)(...streams, (error: unknown) => (error ? reject(error) : resolve()));
  });
}

/** Any failure while reading an archive or staging its members, as the FileToolsError it stands for. */
function asArchiveError(error: unknown, damaged: DamagedReason): unknown {
  if (error instanceof FileToolsError) return error;
  if (error instanceof ArchiveProblem) return problemError(error, damaged);
  const code = errnoOf(error);
  const message = (error as Error)?.message ?? String(error);
  if (code?.startsWith("Z_") || /tar header|unexpected end|invalid header|header exceeds/i.test(message)) {
    return new FileToolsError(damaged, `the archive is damaged or not a tar archive: ${message}`);
  }
  // What the file system refuses to create from a member's name or target is the archive's doing.
  if (code === "ENAMETOOLONG" || code === "EINVAL" || code === "EILSEQ") return new FileToolsError("UNSAFE_ARCHIVE", `an archive member cannot be created here (${code})`);
  return code === undefined ? error : translateErrno(error, "the staging directory");
}

/** The first non-empty chunk (for format detection) and an iterable of everything. */
async function peek(source: AsyncIterable<Uint8Array>): Promise<{ first: Uint8Array; rest: AsyncIterable<Uint8Array> }> {
  const iterator = source[Symbol.asyncIterator]();
  let first: Uint8Array = new Uint8Array(0);
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    if (next.value.length > 0) {
      first = next.value;
      break;
    }
  }
  const head = first;
  async function* rest(): AsyncGenerator<Uint8Array> {
    try {
      if (head.length > 0) yield head;
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        yield next.value;
      }
    } finally {
      await iterator.return?.();
    }
  }
  return { first, rest: rest() };
}
