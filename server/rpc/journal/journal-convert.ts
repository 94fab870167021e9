// Journal records → JournalEntry messages, and Watch / GetJournal globs → a matcher.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { FileType } from "@filetools/proto/filetools/v1/common_pb.js";
import { JournalKind, type JournalEntrySchema } from "@filetools/proto/filetools/v1/journal_pb.js";
import type { JournalRecord } from "../../journal/records.js";
import { globMatcher } from "../../tools/glob.js";
import { timestampFromDate } from "../convert.js";

const KINDS: Record<JournalRecord["kind"], JournalKind> = {
  created: JournalKind.CREATED,
  modified: JournalKind.MODIFIED,
  deleted: JournalKind.DELETED,
  moved: JournalKind.MOVED,
  "made-directory": JournalKind.MADE_DIRECTORY,
  replaced: JournalKind.REPLACED,
};

const TYPES: Record<JournalRecord["type"], FileType> = {
  file: FileType.FILE,
  directory: FileType.DIRECTORY,
  symlink: FileType.SYMLINK,
  other: FileType.OTHER,
  "": FileType.UNSPECIFIED,
};

export function entryMessage(record: JournalRecord): MessageInitShape<typeof JournalEntrySchema> {
  return {
    cursor: BigInt(record.seq),
    time: timestampFromDate(new Date(record.time)),
    kind: KINDS[record.kind],
    path: record.path,
    fromPath: record.from,
    type: TYPES[record.type],
    size: BigInt(record.size),
    sha256: record.sha256,
    versionBefore: record.versionBefore,
    versionAfter: record.versionAfter,
    actor: { tokenName: record.token, runId: record.run, rpc: record.rpc, callId: record.callId },
    outside: record.outside,
  };
}

/**
 * A record matcher for request globs: one with a "/" matches the whole
 * workspace path (a leading "/" optional), one without the last component;
 * a move matches by either end. No globs: everything.
 */
export function recordMatcher(globs: readonly string[]): (record: JournalRecord) => boolean {
  if (globs.length === 0) return () => true;
  const full = globs.filter((glob) => glob.includes("/")).map((glob) => glob.replace(/^\/+/, ""));
  const names = globs.filter((glob) => !glob.includes("/"));
  const matchesFull = full.length > 0 ? globMatcher(full, "watch") : () => false;
  const matchesName = names.length > 0 ? globMatcher(names, "watch") : () => false;
  const matches = (path: string) => path !== "" && (matchesFull(path.slice(1)) || matchesName(path.slice(path.lastIndexOf("/") + 1)));
  return (record) => matches(record.path) || matches(record.from);
}
