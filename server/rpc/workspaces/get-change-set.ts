import { changeSetOf } from "../../runs/lifecycle.js";
import { changeMessage } from "./snapshot-convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";

/** Changes per message: per-message cost dominates in grpc-js, so batch. */
const BATCH = 500;

export function getChangeSetHandler(deps: Deps): WorkspacesHandler<"getChangeSet"> {
  return async function* (request, ctx) {
    const changes = await changeSetOf(deps, request.workspace, request.runId, ctx.signal);
    for (let i = 0; i < changes.length; i += BATCH) yield { changes: changes.slice(i, i + BATCH).map(changeMessage) };
    if (changes.length === 0) yield { changes: [] };
  };
}
