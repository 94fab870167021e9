import { finishRun } from "../../runs/lifecycle.js";
import { snapshotMessage, summaryMessage } from "./snapshot-convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";

export function finishRunHandler(deps: Deps): WorkspacesHandler<"finishRun"> {
  return async (request, ctx) => {
    const options = { snapshot: request.snapshot ?? true, labels: request.labels };
    const { manifest, changes } = await finishRun(deps, request.workspace, request.runId, options, ctx.signal);
    ctx.committed();
    return { snapshot: manifest && snapshotMessage(manifest), changes: summaryMessage(changes) };
  };
}
