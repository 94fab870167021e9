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
import { isDeepStrictEqual } from "node:util";
import { gunzip as gunzipCallback } from "node:zlib";
import { promisify } from "node:util";
import { z } from "zod";
import { fail } from "../errors.js";
import { parseRecord } from "../runs/records.js";
import { MAX_ENTRIES } from "../workspace/limits.js";
import { FileListBuilder, recordsOf } from "./file-list.js";
import type { TableRef } from "./manifest.js";
import { checkContents, chunksByFile, ContentsBuilder, ContentsSchema, MAX_CONTENTS_BYTES, type ContentRef, type Contents } from "./contents.js";

const gunzip = promisify(gunzipCallback);

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

/** The whole table a delta stands for, on its base's whole table; DATA_LOSS when the two do not fit. */
export function applyDelta(base: Contents, delta: ContentsDelta): Contents {
  const damaged = damagedTable(delta.workspace, delta.snapshot);
  const before = entriesOf(base);
  const added = entriesOf(delta.added);
  const apply = <T>(order: readonly number[], from: readonly T[], extra: readonly T[]): T[] => {
    const out: T[] = [];
    let next = 0;
    for (let r = 0; r < order.length; r += 2) {
      const [start, count] = [order[r]!, order[r + 1]!];
      const source = start === -1 ? extra : from;
      const first = start === -1 ? next : start;
      if (first + count > source.length || out.length + count > MAX_ENTRIES) damaged("its order points past its entries");
      for (let i = first; i < first + count; i++) out.push(source[i]!);
      if (start === -1) next += count;
    }
    if (next !== extra.length) damaged("it adds entries its order does not place");
    return out;
  };
  const tarballs = new Map(base.tarballs.map((t) => [t.key, t.bytes]));
  for (const t of delta.added.tarballs) {
    if (tarballs.has(t.key) && tarballs.get(t.key) !== t.bytes) damaged("it gives a tarball another size than its base");
    tarballs.set(t.key, t.bytes);
  }
  const whole = tableOf(delta.workspace, delta.snapshot, [...tarballs].map(([key, bytes]) => ({ key, bytes })), {
    files: apply(delta.order.files, before.files, added.files),
    links: apply(delta.order.links, before.links, added.links),
    directories: apply(delta.order.directories, before.directories, added.directories),
  });
  const problem = checkContents(whole);
  if (problem) damaged(problem);
  return whole;
}

/**
 * `whole` told against `base` (stored as `baseRef`), or undefined when a
 * delta would not pay: more than half its entries are not the base's.
 */
export function deltaOf(base: Contents, baseRef: Omit<TableRef, "bytes">, whole: Contents): ContentsDelta | undefined {
  const before = entriesOf(base);
  const after = entriesOf(whole);
  const added: Entries = { files: [], links: [], directories: [] };
  const order = {
    files: runsOf(before.files, after.files, added.files),
    links: runsOf(before.links, after.links, added.links),
    directories: runsOf(before.directories, after.directories, added.directories),
  };
  const addedCount = added.files.length + added.links.length + added.directories.length;
  if (addedCount * 2 > after.files.length + after.links.length + after.directories.length) return undefined;
  return { format: 2, workspace: whole.workspace, snapshot: whole.snapshot, base: { key: baseRef.key, sha256: baseRef.sha256 }, added: tableOf(whole.workspace, whole.snapshot, whole.tarballs, added), order };
}

/** Runs placing `after`'s entries: those equal to the base's entry at the same path copied from it, the others pushed to `added`. */
function runsOf<T extends { path: string }>(before: readonly T[], after: readonly T[], added: T[]): number[] {
  const at = new Map(before.map((entry, i) => [entry.path, i]));
  const order: number[] = [];
  for (const entry of after) {
    const i = at.get(entry.path);
    const from = i !== undefined && isDeepStrictEqual(before[i], entry) ? i : -1;
    if (from === -1) added.push(entry);
    const last = order.length - 2;
    const extends_ = last >= 0 && (from === -1 ? order[last] === -1 : order[last] !== -1 && order[last]! + order[last + 1]! === from);
    if (extends_) order[last + 1]!++;
    else order.push(from, 1);
  }
  return order;
}

function entriesOf(contents: Contents): Entries {
  const chunks = chunksByFile(contents);
  const entries: Entries = { files: [], links: [], directories: [] };
  const fileCount = contents.files.paths.length;
  let i = 0;
  for (const record of recordsOf(contents.files)) {
    const mtime = contents.mtimes[i]!;
    if (record.type === "file") entries.files.push({ path: record.path, size: record.size, mode: record.mode, sha256: record.sha256, mtime, chunks: chunks[i]! });
    else entries.links.push({ path: record.path, target: record.target, mtime });
    i++;
  }
  if (entries.files.length !== fileCount) throw new Error("file list and chunks differ");
  const { paths, modes, mtimes } = contents.directories;
  for (let d = 0; d < paths.length; d++) entries.directories.push({ path: paths[d]!, mode: modes[d]!, mtime: mtimes[d]! });
  return entries;
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
