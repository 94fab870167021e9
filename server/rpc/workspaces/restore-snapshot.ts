import { restoreSnapshot } from "../../runs/lifecycle.js";
import { snapshotMessage } from "./snapshot-convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";
import { journalReplacedTree } from "../recorder.js";

export function restoreSnapshotHandler(deps: Deps): WorkspacesHandler<"restoreSnapshot"> {
  return async (request, ctx) => {
    await deps.workspaces.get(request.workspace);
    await deps.reserve.ensure();
    const manifest = await restoreSnapshot(deps, request.workspace, request.snapshotId, ctx.signal, { tokenQuota: ctx.tokenQuota() });
    ctx.committed();
    await journalReplacedTree(deps, ctx, request.workspace, "/");
    return { snapshot: snapshotMessage(manifest) };
  };
}
