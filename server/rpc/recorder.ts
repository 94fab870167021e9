// The recorder a mutating handler gives its tool: the workspace's journal and
// the active run's change set, with the call's caller. A handler gets it
// before it changes anything: on a disk too full to journal the change, the
// call is refused then (journal/reserve.ts).
import type { CallContext } from "../grpc/handlers.js";
import { JournalRecorder, journalReplaced } from "../journal/recorder.js";
import type { ChangeRecorder } from "../tools/changes.js";
import type { Deps } from "./types.js";
import type { MergedInto } from "../workspace/workspace.js";

export async function recorderOf(deps: Deps, ctx: CallContext): Promise<ChangeRecorder> {
  await deps.reserve.ensure();
  return new JournalRecorder(deps.journal, deps.runs, deps.reserve, ctx.caller());
}

/** Journals that the tree at `path` was replaced or merged into at once (RestoreSnapshot, ImportArchive: `merged`); the handler ensured the reserve before the change. */
export function journalReplacedTree(deps: Deps, ctx: CallContext, workspaceId: string, path: string, merged?: MergedInto): Promise<void> {
  return journalReplaced(deps.journal, deps.runs, deps.reserve, ctx.caller(), workspaceId, path, merged);
}
