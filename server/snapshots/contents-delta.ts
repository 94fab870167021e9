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
import { checkContents, ContentsBuilder, ContentsSchema, MAX_CONTENTS_BYTES, TableView, viewOf, type Contents, type TableEntries } from "./contents.js";

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
  // A cached table (every run's base): no entries made only to be dropped.
  if (deltas.length === 0) return base;
  const view = new TableView(base);
  let entries: TableEntries = {
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
  const top = deltas.at(-1)!;
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
  const before = viewOf(base);
  const after = viewOf(whole);
  const files = runsOf(before.filePaths, after.filePaths, (i, j) => after.sameFile(i, before, j));
  const links = runsOf(base.files.links.paths, whole.files.links.paths, (i, j) => after.sameLink(i, before, j));
  const directories = runsOf(base.directories.paths, whole.directories.paths, (i, j) => after.sameDirectory(i, before, j));
  const addedCount = files.added.length + links.added.length + directories.added.length;
  if (addedCount * 2 > after.fileCount + after.linkCount + after.directoryCount) return undefined;
  const added: TableEntries = { files: files.added.map((i) => after.file(i)), links: links.added.map((i) => after.link(i)), directories: directories.added.map((i) => after.directory(i)) };
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

function tableOf(workspace: string, snapshot: string, tarballs: ReadonlyArray<{ key: string; bytes: number }>, entries: TableEntries): Contents {
  const builder = new ContentsBuilder();
  for (const t of tarballs) builder.useTarball(t.key, t.bytes);
  const list = new FileListBuilder();
  for (const file of entries.files) {
    list.addFile(file.path, file.size, file.mode, file.sha256);
    builder.addFile(file.mtime, file.chunks);
  }
  for (const link of entries.links) {
    list.addLink(link.path, link.target);
    builder.addLink(link.mtime);
  }
  for (const directory of entries.directories) builder.addDirectory(directory.path, directory.mode, directory.mtime);
  return builder.build(workspace, snapshot, list.build());
}

function damagedTable(workspaceId: string, snapshotId: string): (problem: string) => never {
  return (problem) => fail("DATA_LOSS", `the table of contents of snapshot ${snapshotId} of workspace ${workspaceId} is damaged (${problem})`);
}
