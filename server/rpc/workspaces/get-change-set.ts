import { fail } from "../../errors.js";
import type { Change } from "../../tools/changes.js";
import { changeMessage } from "./snapshot-convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";

const BATCH = 500;

export function getChangeSetHandler(deps: Deps): WorkspacesHandler<"getChangeSet"> {
  return async function* (request, ctx) {
    let changes: Change[];
    const local = await deps.runs.find(request.runId);
    if (local && local.workspace === request.workspace) {
      changes = await deps.runs.changes(local.id);
    } else {
      // A run of another daemon (or before this data directory): its snapshot's manifest has the change set.
      const manifest = request.runId ? await deps.snapshots.findByRun(request.workspace, request.runId, ctx.signal) : undefined;
      if (!manifest) fail("NOT_FOUND", `run ${request.runId || "(none)"} of workspace ${request.workspace} is not known here or in the store`);
      changes = manifest.changeSet;
    }
    for (let i = 0; i < changes.length; i += BATCH) yield { changes: changes.slice(i, i + BATCH).map(changeMessage) };
    if (changes.length === 0) yield { changes: [] };
  };
}
