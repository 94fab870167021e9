import { workspaceMessage } from "../convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";

export function listWorkspacesHandler(deps: Deps): WorkspacesHandler<"listWorkspaces"> {
  return async () => ({ workspaces: (await deps.workspaces.list()).map(workspaceMessage) });
}
