import { startRun } from "../../runs/lifecycle.js";
import { runMessage } from "./snapshot-convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";
import { journalReplacedTree } from "../recorder.js";

export function startRunHandler(deps: Deps): WorkspacesHandler<"startRun"> {
  return async (request, ctx) => {
    await deps.reserve.ensure();
    const run = await startRun(deps, request.workspace, request.restore, request.labels, ctx.signal);
    ctx.committed();
    // The workspace's copy was replaced by a snapshot's contents.
    if (run.restoredFrom !== "") await journalReplacedTree(deps, ctx, request.workspace, "/");
    return { run: runMessage(run) };
  };
}
