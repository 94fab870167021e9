import type { Deps, WorkspacesHandler } from "../types.js";

// An active run of the workspace ends without a snapshot; its snapshots stay in
// the store unless delete_snapshots is set.
export function deleteWorkspaceHandler(deps: Deps): WorkspacesHandler<"deleteWorkspace"> {
  return async (request, ctx) => {
    await deps.workspaces.delete(request.workspace);
    const run = deps.runs.activeRun(request.workspace);
    if (run) await deps.runs.finish(run, "");
    if (request.deleteSnapshots) await deps.snapshots.deleteAll(request.workspace, ctx.signal);
    return { workspace: request.workspace };
  };
}
