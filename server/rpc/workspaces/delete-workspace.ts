import type { Deps, WorkspacesHandler } from "../types.js";

// delete_snapshots takes effect once the snapshot store exists (the runs issue);
// until then a workspace has no snapshots to keep or delete.
export function deleteWorkspaceHandler(deps: Deps): WorkspacesHandler<"deleteWorkspace"> {
  return async (request) => {
    await deps.workspaces.delete(request.workspace);
    return { workspace: request.workspace };
  };
}
