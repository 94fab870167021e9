// A table of contents told against another (format 2): what a snapshot of a
// run that changed a few files stores instead of its whole table (format 1,
// contents.ts), which grows with the tree — 20,000 files take ~1 MB gzipped,
// mostly incompressible SHA-256s. A delta holds the entries that are not its
// base's (as a format-1 table of them alone) and the whole table's order as
// runs: copy so many of the base's entries from here, or take the next so
// many added ones. Reading one applies it to its base, read the same way: the
// manifest lists the chain of tables it stands on (`contents.bases`, nearest
// first, each with its size and sha256), so that pruning keeps them and a
// reader checks each. The chain is bounded (MAX_CONTENTS_CHAIN): past it, or
// when most entries changed, a whole table is written again.
import { gunzip as gunzipCallback } from "node:zlib";
import { promisify } from "node:util";
import { z } from "zod";
import { fail } from "../errors.js";
import { parseRecord } from "../runs/records.js";
import { MAX_ENTRIES } from "../workspace/limits.js";
import { FileListBuilder } from "./file-list.js";
import type { TableRef } from "./manifest.js";
import { checkContents, ContentsBuilder, ContentsSchema, MAX_CONTENTS_BYTES, type ContentRef, type Contents } from "./contents.js";

const gunzip = promisify(gunzipCallback);
const DIGEST_BYTES = 32;

/** Runs [from, count, from, count, …]: from ≥ 0 copies the base's entries from..from+count-1, -1 takes the next count added ones. */
const runs = z.array(z.int().min(-1)).refine((r) => r.length % 2 === 0 && r.every((n, i) => i % 2 === 0 || n > 0), { message: "runs are not pairs with positive counts" });

const DeltaSchema = z.object({
  format: z.literal(2),
  workspace: z.string(),
  snapshot: z.string(),
  /** The table this one is told against. */
  base: z.object({ key: z.string(), sha256: z.string().regex(/^[0-9a-f]{64}$/) }),
  /** The entries that are not the base's, as a table of their own (its tarballs: those their chunks are in). */
  added: ContentsSchema,
  /** The whole table's order, for files, links and directories. */
  order: z.object({ files: runs, links: runs, directories: runs }),
});

export type ContentsDelta = z.infer<typeof DeltaSchema>;

const StoredTableSchema = z.discriminatedUnion("format", [ContentsSchema, DeltaSchema]);

/** A table as entries, one object each (the columnar form is for storage). */
interface Entries {
  files: Array<{ path: string; size: number; mode: number; sha256: string; mtime: number; chunks: ContentRef }>;
  links: Array<{ path: string; target: string; mtime: number }>;
  directories: Array<{ path: string; mode: number; mtime: number }>;
}

/** A stored table of contents, whole or a delta, checked for what it says on its own; DATA_LOSS when it is damaged or lies. */
export async function parseTable(workspaceId: string, snapshotId: string, stored: Buffer): Promise<Contents | ContentsDelta> {
  const damaged = damagedTable(workspaceId, snapshotId);
  let text: string;
  try {
    text = (await gunzip(stored, { maxOutputLength: MAX_CONTENTS_BYTES })).toString("utf8");
  } catch {
    return damaged("not gzip, or too large");
  }
  const parsed = parseRecord(StoredTableSchema, text);
  if (!parsed.ok) return damaged(parsed.problem);
  const table = parsed.value;
  const whole = table.format === 1 ? table : table.added;
  if (table.workspace !== workspaceId || table.snapshot !== snapshotId || whole.workspace !== workspaceId || whole.snapshot !== snapshotId) damaged("it names another snapshot");
  const problem = checkContents(whole);
  if (problem) damaged(problem);
  return table;
}

/**
 * The whole table the last of `deltas` stands for, each told against the one
 * before it and the first against `base`; DATA_LOSS when they do not fit.
 * Applied entry by entry down the chain, one table built and checked at the
 * end (a chain of 20 costs about what one delta does).
 */
export function applyDeltas(base: Contents, deltas: readonly ContentsDelta[]): Contents {
  const view = new TableView(base);
  let entries: Entries = {
    files: Array.from({ length: view.fileCount }, (_, i) => view.file(i)),
    links: Array.from({ length: view.linkCount }, (_, i) => view.link(i)),
    directories: Array.from({ length: view.directoryCount }, (_, i) => view.directory(i)),
  };
  const tarballs = new Map(base.tarballs.map((t) => [t.key, t.bytes]));
  for (const delta of deltas) {
    const damaged = damagedTable(delta.workspace, delta.snapshot);
    const added = new TableView(delta.added);
    const apply = <T>(order: readonly number[], before: readonly T[], extra: (i: number) => T, extraCount: number): T[] => {
      const out: T[] = [];
      let next = 0;
      for (let r = 0; r < order.length; r += 2) {
        const [start, count] = [order[r]!, order[r + 1]!];
        const first = start === -1 ? next : start;
        if (first + count > (start === -1 ? extraCount : before.length) || out.length + count > MAX_ENTRIES) damaged("its order points past its entries");
        for (let i = first; i < first + count; i++) out.push(start === -1 ? extra(i) : before[i]!);
        if (start === -1) next += count;
      }
      if (next !== extraCount) damaged("it adds entries its order does not place");
      return out;
    };
    for (const t of delta.added.tarballs) {
      if (tarballs.has(t.key) && tarballs.get(t.key) !== t.bytes) damaged("it gives a tarball another size than its base");
      tarballs.set(t.key, t.bytes);
    }
    entries = {
      files: apply(delta.order.files, entries.files, (i) => added.file(i), added.fileCount),
      links: apply(delta.order.links, entries.links, (i) => added.link(i), added.linkCount),
      directories: apply(delta.order.directories, entries.directories, (i) => added.directory(i), added.directoryCount),
    };
  }
  const top = deltas.at(-1);
  if (!top) return base;
  const whole = tableOf(top.workspace, top.snapshot, [...tarballs].map(([key, bytes]) => ({ key, bytes })), entries);
  const problem = checkContents(whole);
  if (problem) damagedTable(top.workspace, top.snapshot)(problem);
  return whole;
}

/**
 * `whole` told against `base` (stored as `baseRef`), or undefined when a
 * delta would not pay: more than half its entries are not the base's.
 * Compared column by column: only the entries that differ become objects.
 */
export function deltaOf(base: Contents, baseRef: Omit<TableRef, "bytes">, whole: Contents): ContentsDelta | undefined {
  const before = new TableView(base);
  const after = new TableView(whole);
  const files = runsOf(before.filePaths, after.filePaths, (i, j) => after.sameFile(i, before, j));
  const links = runsOf(base.files.links.paths, whole.files.links.paths, (i, j) => after.sameLink(i, before, j));
  const directories = runsOf(base.directories.paths, whole.directories.paths, (i, j) => after.sameDirectory(i, before, j));
  const addedCount = files.added.length + links.added.length + directories.added.length;
  if (addedCount * 2 > after.fileCount + after.linkCount + after.directoryCount) return undefined;
  const added: Entries = { files: files.added.map((i) => after.file(i)), links: links.added.map((i) => after.link(i)), directories: directories.added.map((i) => after.directory(i)) };
  return {
    format: 2,
    workspace: whole.workspace,
    snapshot: whole.snapshot,
    base: { key: baseRef.key, sha256: baseRef.sha256 },
    added: tableOf(whole.workspace, whole.snapshot, whole.tarballs, added),
    order: { files: files.runs, links: links.runs, directories: directories.runs },
  };
}

/** Runs placing the entries at `after`'s paths: an entry `same` as the base's at its path is copied from it; the others' indices go to `added`. */
function runsOf(before: readonly string[], after: readonly string[], same: (i: number, j: number) => boolean): { runs: number[]; added: number[] } {
  const at = new Map<string, number>();
  for (let j = 0; j < before.length; j++) at.set(before[j]!, j);
  const runs: number[] = [];
  const added: number[] = [];
  for (let i = 0; i < after.length; i++) {
    const j = at.get(after[i]!);
    const from = j !== undefined && same(i, j) ? j : -1;
    if (from === -1) added.push(i);
    const last = runs.length - 2;
    const extendsLast = last >= 0 && (from === -1 ? runs[last] === -1 : runs[last] !== -1 && runs[last]! + runs[last + 1]! === from);
    if (extendsLast) runs[last + 1]!++;
    else runs.push(from, 1);
  }
  return { runs, added };
}

/** A table's entries by index, read from its columns when asked (none made into an object ahead). */
class TableView {
  readonly filePaths: string[] = [];
  readonly fileCount: number;
  readonly linkCount: number;
  readonly directoryCount: number;
  private readonly digests: Buffer;
  private readonly cutDigests: Buffer;
  /** Per file, how many chunks of files cut into several come before its own: where its chunks' digests start. */
  private readonly cutBefore: number[] = [];

  constructor(private readonly table: Contents) {
    const { files, chunks } = table;
    let path = "";
    for (let i = 0; i < files.paths.length; i++) this.filePaths.push((path = path.slice(0, files.shared[i]) + files.paths[i]));
    this.fileCount = files.paths.length;
    this.linkCount = files.links.paths.length;
    this.directoryCount = table.directories.paths.length;
    this.digests = Buffer.from(files.sha256, "base64");
    this.cutDigests = Buffer.from(chunks.sha256, "base64");
    let cut = 0;
    for (let i = 0; i < this.fileCount; i++) {
      this.cutBefore.push(cut);
      const [start, end] = this.chunkRange(i);
      if (end - start > 1) cut += end - start;
    }
  }

  sameFile(i: number, other: TableView, j: number): boolean {
    const [a, b] = [this.table, other.table];
    if (a.files.sizes[i] !== b.files.sizes[j] || a.files.modes[i] !== b.files.modes[j] || a.mtimes[i] !== b.mtimes[j]) return false;
    if (!sameDigest(this.digests, i, other.digests, j)) return false;
    const [start, end] = this.chunkRange(i);
    const [otherStart, otherEnd] = other.chunkRange(j);
    if (end - start !== otherEnd - otherStart) return false;
    for (let c = 0; c < end - start; c++) {
      const [x, y] = [start + c, otherStart + c];
      if (a.tarballs[a.chunks.tarball[x]!]!.key !== b.tarballs[b.chunks.tarball[y]!]!.key) return false;
      if (a.chunks.offset[x] !== b.chunks.offset[y] || a.chunks.length[x] !== b.chunks.length[y] || a.chunks.size[x] !== b.chunks.size[y]) return false;
      if (end - start > 1 && !sameDigest(this.cutDigests, this.cutBefore[i]! + c, other.cutDigests, other.cutBefore[j]! + c)) return false;
    }
    return true;
  }

  sameLink(i: number, other: TableView, j: number): boolean {
    return this.table.files.links.targets[i] === other.table.files.links.targets[j] && this.table.mtimes[this.fileCount + i] === other.table.mtimes[other.fileCount + j];
  }

  sameDirectory(i: number, other: TableView, j: number): boolean {
    const [a, b] = [this.table.directories, other.table.directories];
    return a.modes[i] === b.modes[j] && a.mtimes[i] === b.mtimes[j];
  }

  file(i: number): Entries["files"][number] {
    const { files, chunks, tarballs, mtimes } = this.table;
    const [start, end] = this.chunkRange(i);
    const sha256 = this.digests.toString("hex", i * DIGEST_BYTES, (i + 1) * DIGEST_BYTES);
    const refs: ContentRef = [];
    for (let c = start; c < end; c++) {
      const cut = this.cutBefore[i]! + c - start;
      const chunkSha256 = end - start > 1 ? this.cutDigests.toString("hex", cut * DIGEST_BYTES, (cut + 1) * DIGEST_BYTES) : sha256;
      refs.push({ tarball: tarballs[chunks.tarball[c]!]!.key, offset: chunks.offset[c]!, length: chunks.length[c]!, size: chunks.size[c]!, sha256: chunkSha256 });
    }
    return { path: this.filePaths[i]!, size: files.sizes[i]!, mode: files.modes[i]!, sha256, mtime: mtimes[i]!, chunks: refs };
  }

  link(i: number): Entries["links"][number] {
    const { links } = this.table.files;
    return { path: links.paths[i]!, target: links.targets[i]!, mtime: this.table.mtimes[this.fileCount + i]! };
  }

  directory(i: number): Entries["directories"][number] {
    const { paths, modes, mtimes } = this.table.directories;
    return { path: paths[i]!, mode: modes[i]!, mtime: mtimes[i]! };
  }

  private chunkRange(i: number): [number, number] {
    const { first, tarball } = this.table.chunks;
    return [first[i]!, i + 1 < first.length ? first[i + 1]! : tarball.length];
  }
}

function sameDigest(digests: Buffer, at: number, others: Buffer, otherAt: number): boolean {
  return digests.compare(others, otherAt * DIGEST_BYTES, (otherAt + 1) * DIGEST_BYTES, at * DIGEST_BYTES, (at + 1) * DIGEST_BYTES) === 0;
}

function tableOf(workspace: string, snapshot: string, tarballs: ReadonlyArray<{ key: string; bytes: number }>, entries: Entries): Contents {
  const builder = new ContentsBuilder();
  for (const t of tarballs) builder.useTarball(t.key, t.bytes);
  const list = new FileListBuilder();
  for (const file of entries.files) {
    list.addFile(file.path, file.size, file.mode, Buffer.from(file.sha256, "hex"));
    builder.addFile(file.mtime, file.chunks);
  }
  for (const link of entries.links) {
    list.addLink(link.path, link.target);
    builder.addLink(link.mtime);
  }
  for (const directory of entries.directories) builder.addDirectory(directory.path, directory.mode, directory.mtime);
  return builder.build(workspace, snapshot, list.build());
}

export function damagedTable(workspaceId: string, snapshotId: string): (problem: string) => never {
  return (problem) => fail("DATA_LOSS", `the table of contents of snapshot ${snapshotId} of workspace ${workspaceId} is damaged (${problem})`);
}
