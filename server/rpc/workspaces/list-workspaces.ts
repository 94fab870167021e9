import { workspaceMessage } from "../convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";

export function listWorkspacesHandler(deps: Deps): WorkspacesHandler<"listWorkspaces"> {
  return async (_request, ctx) => ({
    workspaces: (await deps.workspaces.list()).filter((workspace) => ctx.mayAccess(workspace.id)).map(workspaceMessage),
  });
}
