import { workspaceMessage } from "../convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";

export function createWorkspaceHandler(deps: Deps): WorkspacesHandler<"createWorkspace"> {
  return async (request) => ({ workspace: workspaceMessage(await deps.workspaces.create(request.workspace)) });
}
