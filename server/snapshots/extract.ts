// Extraction of an untrusted tarball (plain or gzip) into a staging directory
// (SPEC 4.2, shared/notes/security.md 2.3). Strict: the first refused member
// fails the whole extraction with UNSAFE_ARCHIVE, and the caller discards the
// staging directory, so a refused archive changes nothing. Only directories,
// regular files, symbolic links whose target stays inside and hard links to an
// earlier regular file of the same archive are accepted. Symbolic links are
// created last, and the staging module never opens a path through a link.
import { Readable, Transform, pipeline } from "node:stream";
import { createGunzip } from "node:zlib";
import tar from "tar-stream";
import { fail, FileToolsError } from "../errors.js";
import type { Staging } from "../workspace/staging.js";
import { MAX_CONTENT_BYTES, MAX_DEPTH, MAX_ENTRIES, MAX_PATH_BYTES, MAX_SYMLINK_TARGET_BYTES, MAX_COMPONENT_BYTES } from "../workspace/limits.js";
import { byteLengthOfName, nameFromBytes } from "../workspace/names.js";

export interface ExtractLimits {
  /** Total bytes of regular-file content. */
  maxBytes: number;
  /** Members of any kind. */
  maxMembers: number;
  /** Components in a member name. */
  maxDepth: number;
  /** Bytes in a member's path, its components joined by "/" (one component: 255). */
  maxNameBytes: number;
}

/** Files up to this size are collected in memory and written with synchronous calls. */
const SMALL_FILE_BYTES = 1 << 20;

/** Output per inflate call on the thread pool (the default 16 KiB costs a main-thread round trip each). */
const INFLATE_CHUNK_BYTES = 1 << 20;
const INFLATE_AHEAD_BYTES = 8 << 20;

/** The tree limits of workspace/limits.ts: what the API can create and the packer stores, a restore accepts. */
export const DEFAULT_LIMITS: ExtractLimits = {
  maxBytes: MAX_CONTENT_BYTES,
  maxMembers: MAX_ENTRIES,
  maxDepth: MAX_DEPTH,
  maxNameBytes: MAX_PATH_BYTES,
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

export interface ExtractResult {
  fileCount: number;
  sizeBytes: number;
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
 * Resolves a symbolic link's target the way the kernel would, through the
 * archive's other symbolic links; false when it leaves the archive root.
 */
function staysInside(linkParts: readonly string[], target: string, links: ReadonlyMap<string, string>): boolean {
  let out = linkParts.slice(0, -1);
  let pending = target.split("/");
  let budget = 40;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length === 0) return false;
      out = out.slice(0, -1);
      continue;
    }
    const next = [...out, part];
    const linked = links.get(next.join("/"));
    if (linked !== undefined) {
      if (--budget < 0 || linked.startsWith("/")) return false;
      pending = [...linked.split("/"), ...pending];
      continue;
    }
    out = next;
  }
  return true;
}

/** Extracts `source` into `staging`; throws UNSAFE_ARCHIVE (or the I/O error) on the first problem. */
export async function extractArchive(source: AsyncIterable<Uint8Array>, staging: Staging, limits: ExtractLimits = DEFAULT_LIMITS): Promise<ExtractResult> {
  const { first, rest } = await peek(source);
  const gzipped = first.length >= 2 && first[0] === 0x1f && first[1] === 0x8b;
  // Decompressed bytes: content plus headers and padding, bounded so a gzip bomb stops early.
  const maxRaw = limits.maxBytes + (limits.maxMembers + 2) * 1536 + 10240;
  let raw = 0;
  const counter = new Transform({
    // Room for the inflater to run ahead while the main thread creates files.
    highWaterMark: INFLATE_AHEAD_BYTES,
    transform(chunk: Buffer, _encoding, callback) {
      raw += chunk.length;
      if (raw > maxRaw) callback(new FileToolsError("UNSAFE_ARCHIVE", `archive expands to more than ${limits.maxBytes} bytes`));
      else callback(null, chunk);
    },
  });
  const extract = nameExactExtract();
  let streamError: unknown = null;
  const input = Readable.from(rest);
  const streams = gzipped ? [input, createGunzip({ chunkSize: INFLATE_CHUNK_BYTES }), counter, extract] : [input, counter, extract];
  const done = new Promise<void>((resolve) => {
    (pipeline as (...args: unknown[]) => void)(...streams, (error: unknown) => {
      if (error) streamError = error;
      resolve();
    });
  });

  const files = new Set<string>();
  const links = new Map<string, string>();
  const pendingLinks: Array<{ parts: string[]; target: string }> = [];
  let members = 0;
  let sizeBytes = 0;
  let fileCount = 0;
  try {
    for await (const entry of extract) {
      const header = entry.header;
      if (++members > limits.maxMembers) unsafe(`archive has more than ${limits.maxMembers} members`);
      const held = heldMemberNames(header);
      const parts = memberParts(held.name, limits);
      const linkname = held.linkname;
      const name = parts.join("/");
      for (let i = 1; i < parts.length; i++) {
        if (links.has(parts.slice(0, i).join("/"))) unsafe(`archive member ${name} goes through the symbolic link ${parts.slice(0, i).join("/")}`);
      }
      switch (header.type) {
        case "directory":
          entry.resume();
          if (parts.length > 0) await staging.mkdir(parts);
          break;
        case "file":
        case "contiguous-file": {
          if (parts.length === 0) unsafe("archive file member names the extraction root");
          if (links.has(name)) unsafe(`archive member ${name} replaces a symbolic link`);
          sizeBytes += header.size ?? 0;
          if (sizeBytes > limits.maxBytes) unsafe(`archive holds more than ${limits.maxBytes} bytes`);
          // Owner bits kept, group/other write and set-uid/set-gid/sticky dropped.
          const mode = ((header.mode ?? 0o644) & 0o755) | 0o600;
          if ((header.size ?? 0) <= SMALL_FILE_BYTES) {
            const chunks: Buffer[] = [];
            for await (const chunk of entry as AsyncIterable<Buffer>) chunks.push(chunk);
            await staging.writeSmallFile(parts, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), mode);
          } else {
            await staging.writeFile(parts, entry as AsyncIterable<Uint8Array>, mode);
          }
          files.add(name);
          fileCount++;
          break;
        }
        case "symlink": {
          entry.resume();
          const target = linkname;
          if (parts.length === 0) unsafe("archive symbolic link names the extraction root");
          if (byteLengthOfName(target) > MAX_SYMLINK_TARGET_BYTES) unsafe(`archive symbolic link ${name} has a target longer than ${MAX_SYMLINK_TARGET_BYTES} bytes`);
          if (target === "" || target.startsWith("/") || target.includes("\0")) unsafe(`archive symbolic link ${name} has an absolute or empty target`);
          if (files.has(name)) unsafe(`archive symbolic link ${name} replaces a file`);
          for (const existing of files) if (existing.startsWith(name + "/")) unsafe(`archive symbolic link ${name} replaces a directory`);
          if (links.has(name)) unsafe(`archive has two symbolic links named ${name}`);
          links.set(name, target);
          pendingLinks.push({ parts, target });
          break;
        }
        case "link": {
          entry.resume();
          const targetParts = memberParts(linkname, limits);
          if (!files.has(targetParts.join("/"))) unsafe(`archive hard link ${name} points outside the archive or at a non-file`);
          if (links.has(name)) unsafe(`archive member ${name} replaces a symbolic link`);
          await staging.link(parts, targetParts);
          files.add(name);
          break;
        }
        default:
          entry.resume();
          unsafe(`archive member ${name} is a ${header.type}, which is refused`);
      }
    }
    await done;
    if (streamError) throw streamError;
    for (const link of pendingLinks) {
      if (!staysInside(link.parts, link.target, links)) unsafe(`archive symbolic link ${link.parts.join("/")} points outside`);
    }
    for (const link of pendingLinks) await staging.symlink(link.parts, link.target);
    return { fileCount, sizeBytes };
  } catch (error) {
    extract.destroy();
    input.destroy();
    await done;
    if (error instanceof FileToolsError) throw error;
    if (streamError instanceof FileToolsError) throw streamError;
    const message = (error as Error)?.message ?? String(error);
    if (/tar|header|gzip|unexpected end|invalid|incorrect/i.test(message) || (error as NodeJS.ErrnoException)?.code?.startsWith("Z_")) {
      unsafe(`not a valid tar archive: ${message}`);
    }
    throw error;
  } finally {
    await staging.release();
  }
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
    if (head.length > 0) yield head;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  return { first, rest: rest() };
}
