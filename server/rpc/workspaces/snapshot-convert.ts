// Run, snapshot and change-set values → protobuf message shapes.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { ChangeKind, type ChangeSchema, type RunSchema, type SnapshotSchema } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import type { RunInfo, ChangeSummary } from "../../runs/runs.js";
import type { Manifest } from "../../snapshots/snapshots.js";
import type { Change } from "../../tools/changes.js";
import { timestampFromDate } from "../convert.js";

const KINDS = { create: ChangeKind.CREATE, modify: ChangeKind.MODIFY, delete: ChangeKind.DELETE, move: ChangeKind.MOVE } as const;

export function runMessage(run: RunInfo): MessageInitShape<typeof RunSchema> {
  return { id: run.id, workspace: run.workspace, startedAt: timestampFromDate(new Date(run.startedAt)), restoredFrom: run.restoredFrom, labels: run.labels };
}

export function summaryMessage(summary: ChangeSummary) {
  return { created: BigInt(summary.created), modified: BigInt(summary.modified), deleted: BigInt(summary.deleted), moved: BigInt(summary.moved) };
}

export function snapshotMessage(manifest: Manifest): MessageInitShape<typeof SnapshotSchema> {
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
