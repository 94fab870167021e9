import { workspaceMessage } from "../convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";

export function getWorkspaceHandler(deps: Deps): WorkspacesHandler<"getWorkspace"> {
  return async (request) => ({ workspace: workspaceMessage(await deps.workspaces.get(request.workspace)) });
}
