import { snapshotMessage } from "./snapshot-convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";

// The workspace need not exist here: a fresh daemon lists what the store holds.
export function listSnapshotsHandler(deps: Deps): WorkspacesHandler<"listSnapshots"> {
  return async (request, ctx) => ({ snapshots: (await deps.snapshots.list(request.workspace, ctx.signal)).map(snapshotMessage) });
}
