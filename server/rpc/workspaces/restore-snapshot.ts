import { snapshotMessage } from "./snapshot-convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";

export function restoreSnapshotHandler(deps: Deps): WorkspacesHandler<"restoreSnapshot"> {
  return async (request, ctx) => {
    await deps.workspaces.get(request.workspace);
    const manifest = await deps.snapshots.find(request.workspace, request.snapshotId, ctx.signal);
    await deps.snapshots.restore(request.workspace, manifest, ctx.signal, { tokenQuota: ctx.tokenQuota() });
    ctx.committed();
    return { snapshot: snapshotMessage(manifest) };
  };
}
