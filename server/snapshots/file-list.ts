// A snapshot's per-file list, kept in its manifest so that two snapshots (or
// a snapshot and the live workspace) can be compared without reading either
// tarball. Compact for 100,000 files: parallel arrays rather than an object
// per file (no repeated keys), paths front-coded (each stored as the
// characters it does not share with the previous path, and how many it
// shares: in walk order, neighbours share their directories), and the
// digests as one base64 string of the raw 32-byte SHA-256s rather than 64
// hex characters each. Files and links in the packer's walk order; paths are
// workspace paths ("/src/a.ts", escaped as the workspace module shows them).
import { z } from "zod";
import type { HashedEntry } from "../workspace/hash-tree.js";

const DIGEST_BYTES = 32;
const TAR_BLOCK = 512;
/**
 * Tar one member takes besides its content and its names' bytes: its header,
 * and a pax record or GNU long-name records of its names with their headers
 * and padding (pack.ts), rounded up.
 */
const TAR_BYTES_PER_MEMBER = 3 * 1024;

export const FileListSchema = z
  .object({
    /** Regular files: each workspace path after its first shared[i] characters (see frontCoded). */
    paths: z.array(z.string()),
    /** How many leading characters (UTF-16 units) each path shares with the previous one (0 for the first). */
    shared: z.array(z.int().nonnegative()),
    /** Their sizes in bytes. */
    sizes: z.array(z.int().nonnegative()),
    /** Their permission bits (as stored in the tarball: st_mode & 0o777). */
    modes: z.array(z.int().min(0).max(0o777)),
    /** Their SHA-256s, raw and concatenated, as base64. */
    sha256: z.base64(),
    /** Symbolic links (stored as links, never followed): paths and targets. */
    links: z.object({ paths: z.array(z.string()), targets: z.array(z.string()) }),
  })
  .refine(
    (list) =>
      list.sizes.length === list.paths.length &&
      list.shared.length === list.paths.length &&
      fitsFrontCoding(list.paths, list.shared) &&
      list.modes.length === list.paths.length &&
      Buffer.byteLength(list.sha256, "base64") === list.paths.length * DIGEST_BYTES &&
      list.links.targets.length === list.links.paths.length,
    { message: "the file list's arrays differ in length" },
  );

export type FileList = z.infer<typeof FileListSchema>;

/** Whether every path shares no more characters than the previous one has. */
function fitsFrontCoding(suffixes: readonly string[], shared: readonly number[]): boolean {
  let length = 0;
  for (let i = 0; i < suffixes.length; i++) {
    if (shared[i]! > length) return false;
    length = shared[i]! + suffixes[i]!.length;
  }
  return true;
}

/** One path of a file list: the same shape as a live workspace's hashed entry, so the two compare directly. */
export type FileRecord = HashedEntry;

/** Collects the list while the packer streams files into the tarball. */
export class FileListBuilder {
  private readonly paths: string[] = [];
  private readonly shared: number[] = [];
  private previous = "";
  private readonly sizes: number[] = [];
  private readonly modes: number[] = [];
  /** Hex: a run's unchanged files bring theirs from the stat cache as they are (no Buffer each). */
  private readonly digests: string[] = [];
  private readonly linkPaths: string[] = [];
  private readonly targets: string[] = [];

  addFile(path: string, size: number, mode: number, sha256: string): void {
    const limit = Math.min(path.length, this.previous.length);
    let common = 0;
    while (common < limit && path.charCodeAt(common) === this.previous.charCodeAt(common)) common++;
    this.shared.push(common);
    this.paths.push(path.slice(common));
    this.previous = path;
    this.sizes.push(size);
    this.modes.push(mode);
    this.digests.push(sha256);
  }

  addLink(path: string, target: string): void {
    this.linkPaths.push(path);
    this.targets.push(target);
  }

  build(): FileList {
    return {
      paths: this.paths,
      shared: this.shared,
      sizes: this.sizes,
      modes: this.modes,
      sha256: Buffer.from(this.digests.join(""), "hex").toString("base64"),
      links: { paths: this.linkPaths, targets: this.targets },
    };
  }
}

/**
 * The most bytes of plain tar a packer writes for the files and links in
 * `list` and the directories above them: each member's header and long-name
 * records, each file's content padded to whole blocks. Names count as their
 * shown form, which is never shorter than their bytes. Empty directories are
 * not in the list: the caller allows for them.
 */
export function tarBytesFor(list: FileList): number {
  const directories = new Set<string>();
  let total = 0;
  for (const record of recordsOf(list)) {
    total += TAR_BYTES_PER_MEMBER + Buffer.byteLength(record.path) + Buffer.byteLength(record.target) + Math.ceil(record.size / TAR_BLOCK) * TAR_BLOCK;
    // Parents from the deepest up; one already seen has its own parents counted.
    for (let slash = record.path.lastIndexOf("/"); slash > 0; slash = record.path.lastIndexOf("/", slash - 1)) {
      const directory = record.path.slice(0, slash);
      if (directories.has(directory)) break;
      directories.add(directory);
      total += TAR_BYTES_PER_MEMBER + Buffer.byteLength(directory) + 1;
    }
  }
  return total;
}

/** The list's records: files, then links. */
export function* recordsOf(list: FileList): Generator<FileRecord> {
  const digests = Buffer.from(list.sha256, "base64");
  let path = "";
  for (let i = 0; i < list.paths.length; i++) {
    const sha256 = digests.toString("hex", i * DIGEST_BYTES, (i + 1) * DIGEST_BYTES);
    path = path.slice(0, list.shared[i]) + list.paths[i];
    yield { path, type: "file", size: list.sizes[i]!, mode: list.modes[i]!, sha256, target: "" };
  }
  for (let i = 0; i < list.links.paths.length; i++) {
    yield { path: list.links.paths[i]!, type: "symlink", size: 0, mode: 0o777, sha256: "", target: list.links.targets[i]! };
  }
}
