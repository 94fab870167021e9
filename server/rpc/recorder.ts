// The recorder a mutating handler gives its tool: the workspace's journal and
// the active run's change set, with the call's caller.
import type { CallContext } from "../grpc/handlers.js";
import { JournalRecorder } from "../journal/recorder.js";
import type { ChangeRecorder } from "../tools/changes.js";
import type { Deps } from "./types.js";

export function recorderOf(deps: Deps, ctx: CallContext): ChangeRecorder {
  return new JournalRecorder(deps.journal, deps.runs, ctx.caller());
}
