// Run, snapshot and change-set values → protobuf message shapes.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { ChangeKind, DiffEntryType, DiffKind, type ActiveRunSchema, type ChangeSchema, type DiffEntrySchema, type RunSchema, type SnapshotSchema } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import type { RunInfo, ChangeSummary } from "../../runs/runs.js";
import type { ActiveRunInfo } from "../../runs/lifecycle.js";
import type { Listed } from "../../snapshots/snapshots.js";
import type { Change } from "../../tools/changes.js";
import type { DiffEntry } from "../../snapshots/diff.js";
import type { FileRecord } from "../../snapshots/file-list.js";
import { timestampFromDate } from "../convert.js";

const DIFF_KINDS = { added: DiffKind.ADDED, removed: DiffKind.REMOVED, modified: DiffKind.MODIFIED } as const;
const ENTRY_TYPES = { file: DiffEntryType.FILE, symlink: DiffEntryType.SYMLINK } as const;

const KINDS = { create: ChangeKind.CREATE, modify: ChangeKind.MODIFY, delete: ChangeKind.DELETE, move: ChangeKind.MOVE } as const;

export function runMessage(run: RunInfo): MessageInitShape<typeof RunSchema> {
  return {
    id: run.id,
    workspace: run.workspace,
    startedAt: timestampFromDate(new Date(run.startedAt)),
    restoredFrom: run.restoredFrom,
    labels: run.labels,
    startedFrom: run.base ?? "",
    node: run.node ?? "",
  };
}

export function activeRunMessage(run: ActiveRunInfo): MessageInitShape<typeof ActiveRunSchema> {
  const at = (iso: string | undefined) => (iso === undefined ? undefined : timestampFromDate(new Date(iso)));
  return { workspace: run.workspace, runId: run.runId, node: run.node, startedAt: at(run.startedAt), leaseExpiresAt: at(run.leaseExpiresAt), local: run.local };
}

export function summaryMessage(summary: ChangeSummary) {
  return { created: BigInt(summary.created), modified: BigInt(summary.modified), deleted: BigInt(summary.deleted), moved: BigInt(summary.moved) };
}

export function snapshotMessage(manifest: Listed): MessageInitShape<typeof SnapshotSchema> {
  const recoveredReason = manifest.recovered ?? manifest.recoveredReason ?? "";
  return {
    id: manifest.id,
    workspace: manifest.workspace,
    runId: manifest.runId,
    createdAt: timestampFromDate(new Date(manifest.createdAt)),
    sizeBytes: BigInt(manifest.sizeBytes),
    sha256: manifest.sha256,
    fileCount: BigInt(manifest.fileCount),
    labels: manifest.labels,
    changes: summaryMessage(manifest.changes),
    parent: manifest.parent,
    recovered: recoveredReason !== "",
    recoveredReason,
    treeBytes: BigInt(manifest.treeBytes ?? 0),
    tarballs: manifest.tarballs?.length ?? 1,
  };
}

export function changeMessage(change: Change): MessageInitShape<typeof ChangeSchema> {
  return {
    kind: KINDS[change.kind],
    path: change.path,
    sourcePath: change.sourcePath,
    sha256Before: change.sha256Before,
    sha256After: change.sha256After,
    time: timestampFromDate(new Date(change.time)),
  };
}

export function diffEntryMessage(entry: DiffEntry): MessageInitShape<typeof DiffEntrySchema> {
  const side = (record: FileRecord | undefined) => ({
    size: BigInt(record?.size ?? 0),
    sha256: record?.sha256 ?? "",
    mode: record?.mode ?? 0,
    type: record ? ENTRY_TYPES[record.type] : DiffEntryType.UNSPECIFIED,
    link: record?.target ?? "",
  });
  const before = side(entry.before);
  const after = side(entry.after);
  return {
    path: entry.path,
    kind: DIFF_KINDS[entry.kind],
    sizeBefore: before.size,
    sizeAfter: after.size,
    sha256Before: before.sha256,
    sha256After: after.sha256,
    modeBefore: before.mode,
    modeAfter: after.mode,
    typeBefore: before.type,
    typeAfter: after.type,
    linkBefore: before.link,
    linkAfter: after.link,
  };
}
