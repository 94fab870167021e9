import { fail } from "../../errors.js";
import { diffEntryMessage } from "./snapshot-convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";

/** Entries per message: per-message cost dominates in grpc-js, so batch. */
const BATCH = 500;

export function diffSnapshotsHandler(deps: Deps): WorkspacesHandler<"diffSnapshots"> {
  return async function* (request, ctx) {
    if (request.live && request.to !== "") fail("INVALID_ARGUMENT", "name a snapshot in to, or set live, not both");
    const to = request.to === "" ? { live: await deps.workspaces.get(request.workspace) } : { snapshotId: request.to };
    const diff = await deps.snapshots.diff(request.workspace, request.from, to, ctx.signal);
    let batch = [];
    for await (const entry of diff.entries) {
      batch.push(diffEntryMessage(entry));
      if (batch.length === BATCH) {
        yield { event: { case: "entries", value: { entries: batch } } };
        batch = [];
      }
    }
    if (batch.length > 0) yield { event: { case: "entries", value: { entries: batch } } };
    const counts = diff.counts;
    const summary = { from: diff.from.id, to: diff.to?.id ?? "", added: BigInt(counts.added), removed: BigInt(counts.removed), modified: BigInt(counts.modified), unchanged: BigInt(counts.unchanged) };
    yield { event: { case: "summary", value: summary } };
  };
}
