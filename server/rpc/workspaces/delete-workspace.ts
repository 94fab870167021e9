import { deleteWorkspace } from "../../runs/lifecycle.js";
import type { Deps, WorkspacesHandler } from "../types.js";

export function deleteWorkspaceHandler(deps: Deps): WorkspacesHandler<"deleteWorkspace"> {
  return async (request, ctx) => {
    await deleteWorkspace(deps, request.workspace, request.deleteSnapshots, ctx.signal);
    await deps.journal.forget(request.workspace);
    return { workspace: request.workspace };
  };
}
