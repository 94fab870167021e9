// Domain values → protobuf message shapes (the handlers' only translation).
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { TimestampSchema } from "@bufbuild/protobuf/wkt";
import { FileType, type FileInfoSchema } from "@filetools/proto/filetools/v1/common_pb.js";
import { WriteMode } from "@filetools/proto/filetools/v1/files_pb.js";
import type { WorkspaceSchema } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import { fail } from "../errors.js";
import { wholeSeconds, type Entry, type EntryType } from "../workspace/entry.js";
import type { Workspace, WriteMode as DomainWriteMode } from "../workspace/workspace.js";

const FILE_TYPES: Record<EntryType, FileType> = {
  file: FileType.FILE,
  directory: FileType.DIRECTORY,
  symlink: FileType.SYMLINK,
  other: FileType.OTHER,
};

export function fileInfo(entry: Entry, extra: { isBinary?: boolean; lineCount?: bigint } = {}): MessageInitShape<typeof FileInfoSchema> {
  return {
    path: entry.path,
    name: entry.name,
    escaped: entry.escaped,
    type: FILE_TYPES[entry.type],
    size: entry.size,
    mode: entry.mode,
    mtime: timestampFromNs(entry.mtimeNs),
    version: entry.version,
    isBinary: extra.isBinary,
    lineCount: extra.lineCount,
  };
}

/** A Timestamp's seconds round down, its nanos are never negative (a time before 1970 too). */
export function timestampFromNs(ns: bigint): MessageInitShape<typeof TimestampSchema> {
  const seconds = wholeSeconds(ns);
  return { seconds, nanos: Number(ns - seconds * 1_000_000_000n) };
}

export function timestampFromDate(date: Date): MessageInitShape<typeof TimestampSchema> {
  return timestampFromNs(BigInt(date.getTime()) * 1_000_000n);
}

export function workspaceMessage(workspace: Workspace): MessageInitShape<typeof WorkspaceSchema> {
  return { id: workspace.id, bound: workspace.bound, createdAt: timestampFromDate(workspace.createdAt) };
}

/** The domain write mode of a whole-file write; APPEND is handled by the caller. */
export function writeMode(mode: WriteMode): DomainWriteMode {
  switch (mode) {
    case WriteMode.UNSPECIFIED:
    case WriteMode.CREATE_OR_REPLACE:
      return "create-or-replace";
    case WriteMode.CREATE_ONLY:
      return "create-only";
    case WriteMode.REPLACE_ONLY:
      return "replace-only";
    default:
      fail("INVALID_ARGUMENT", `unsupported write mode ${WriteMode[mode] ?? mode}`);
  }
}
