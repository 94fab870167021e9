import { summarize } from "../../runs/runs.js";
import { snapshotMessage, summaryMessage } from "./snapshot-convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";

export function finishRunHandler(deps: Deps): WorkspacesHandler<"finishRun"> {
  return async (request, ctx) => {
    const workspace = await deps.workspaces.get(request.workspace);
    const run = deps.runs.requireActive(request.workspace, request.runId);
    const changeSet = await deps.runs.changes(run.id);
    // A failed snapshot (store down) leaves the run active: the caller can retry.
    const manifest =
      (request.snapshot ?? true) ? await deps.snapshots.create(workspace, { runId: run.id, labels: { ...run.labels, ...request.labels }, changeSet }, ctx.signal) : undefined;
    await deps.runs.finish(run, manifest?.id ?? "");
    return { snapshot: manifest && snapshotMessage(manifest), changes: summaryMessage(summarize(changeSet)) };
  };
}
