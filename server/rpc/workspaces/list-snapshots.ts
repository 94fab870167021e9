import { timestampDate } from "@bufbuild/protobuf/wkt";
import { snapshotMessage } from "./snapshot-convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";

// The workspace need not exist here: a fresh daemon lists what the store holds.
export function listSnapshotsHandler(deps: Deps): WorkspacesHandler<"listSnapshots"> {
  return async (request, ctx) => {
    const filter = {
      labels: request.labels,
      createdAfter: request.createdAfter && timestampDate(request.createdAfter),
      createdBefore: request.createdBefore && timestampDate(request.createdBefore),
      includeRecovered: request.includeRecovered,
    };
    return { snapshots: (await deps.snapshots.listMatching(request.workspace, filter, ctx.signal)).map(snapshotMessage) };
  };
}
