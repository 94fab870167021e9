// The difference between two sets of file records (a snapshot's file list,
// and another's or the live workspace's). The "from" side is held in a map
// (it is a manifest's list, in memory already); the "to" side streams, so a
// live workspace is hashed and compared one file at a time.
import type { FileRecord } from "./file-list.js";

export type DiffKind = "added" | "removed" | "modified";

export interface DiffEntry {
  path: string;
  kind: DiffKind;
  /** The path in "from"; undefined when added. */
  before?: FileRecord;
  /** The path in "to"; undefined when removed. */
  after?: FileRecord;
}

export interface DiffCounts {
  added: number;
  removed: number;
  modified: number;
  unchanged: number;
}

/** Entries of the paths in `to` that differ (in its order), then those removed (in `from`'s order); `counts` is final once the generator ends. */
export async function* diffRecords(from: Iterable<FileRecord>, to: AsyncIterable<FileRecord> | Iterable<FileRecord>, counts: DiffCounts): AsyncGenerator<DiffEntry> {
  const before = new Map<string, FileRecord>();
  for (const record of from) before.set(record.path, record);
  for await (const after of to) {
    const old = before.get(after.path);
    if (old === undefined) {
      counts.added++;
      yield { path: after.path, kind: "added", after };
      continue;
    }
    before.delete(after.path);
    if (same(old, after)) counts.unchanged++;
    else {
      counts.modified++;
      yield { path: after.path, kind: "modified", before: old, after };
    }
  }
  for (const old of before.values()) {
    counts.removed++;
    yield { path: old.path, kind: "removed", before: old };
  }
}

function same(a: FileRecord, b: FileRecord): boolean {
  return a.type === b.type && a.size === b.size && a.mode === b.mode && a.sha256 === b.sha256 && a.target === b.target;
}
