import { describeWorkspace } from "../../runs/lifecycle.js";
import { workspaceMessage } from "../convert.js";
import { activeRunMessage } from "./snapshot-convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";

export function getWorkspaceHandler(deps: Deps): WorkspacesHandler<"getWorkspace"> {
  return async (request, ctx) => {
    const { workspace, active, newest, copy } = await describeWorkspace(deps, request.workspace, ctx.signal);
    return {
      workspace: workspaceMessage(workspace),
      activeRun: active && activeRunMessage(active),
      newestSnapshot: newest,
      copyOf: copy.snapshot ?? "",
      unpublishedChanges: copy.changed,
    };
  };
}
