import { restoreSnapshot } from "../../runs/lifecycle.js";
import { snapshotMessage } from "./snapshot-convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";

export function restoreSnapshotHandler(deps: Deps): WorkspacesHandler<"restoreSnapshot"> {
  return async (request, ctx) => {
    await deps.workspaces.get(request.workspace);
    const manifest = await restoreSnapshot(deps, request.workspace, request.snapshotId, ctx.signal, { tokenQuota: ctx.tokenQuota() });
    ctx.committed();
    return { snapshot: snapshotMessage(manifest) };
  };
}
