import { abandonRun } from "../../runs/lifecycle.js";
import { snapshotMessage } from "./snapshot-convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";

export function abandonRunHandler(deps: Deps): WorkspacesHandler<"abandonRun"> {
  return async (request, ctx) => {
    const ended = await abandonRun(deps, request.workspace, request.runId, request.reason, ctx.signal);
    ctx.committed();
    return { runId: ended.runId, recovered: ended.recovered && snapshotMessage(ended.recovered), leaseBroken: ended.leaseBroken };
  };
}
