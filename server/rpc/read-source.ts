// Where a read-only call reads (Read, Stat, List, Download): the live
// workspace, or the stored snapshot its request names in `at_snapshot`.
import type { ReadSource } from "../tools/source.js";
import type { Deps } from "./types.js";

export async function readSource(deps: Deps, request: { workspace: string; atSnapshot: string }, signal: AbortSignal): Promise<ReadSource> {
  if (request.atSnapshot === "") return deps.workspaces.get(request.workspace);
  return (await deps.snapshots.treeAt(request.workspace, request.atSnapshot, signal)).source(signal);
}
