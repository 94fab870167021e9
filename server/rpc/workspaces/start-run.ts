import { startRun } from "../../runs/lifecycle.js";
import { runMessage } from "./snapshot-convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";

export function startRunHandler(deps: Deps): WorkspacesHandler<"startRun"> {
  return async (request, ctx) => {
    const run = await startRun(deps, request.workspace, request.restore, request.labels, ctx.signal);
    ctx.committed();
    return { run: runMessage(run) };
  };
}
