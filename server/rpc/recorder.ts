// The recorder a mutating handler gives its tool: the workspace's journal and
// the active run's change set, with the call's caller.
import type { CallContext } from "../grpc/handlers.js";
import { JournalRecorder, journalReplaced } from "../journal/recorder.js";
import type { ChangeRecorder } from "../tools/changes.js";
import type { Deps } from "./types.js";

export function recorderOf(deps: Deps, ctx: CallContext): ChangeRecorder {
  return new JournalRecorder(deps.journal, deps.runs, ctx.caller());
}

/** Journals that the tree at `path` was replaced or merged into at once (RestoreSnapshot, ImportArchive). */
export function journalReplacedTree(deps: Deps, ctx: CallContext, workspaceId: string, path: string): Promise<void> {
  return journalReplaced(deps.journal, deps.runs, ctx.caller(), workspaceId, path);
}
