import { displayPath, parsePath } from "../../workspace/paths.js";
import { journalReplacedTree } from "../recorder.js";
import { headerThenChunks } from "../header-then-chunks.js";
import type { Deps, WorkspacesHandler } from "../types.js";

export function importArchiveHandler(deps: Deps): WorkspacesHandler<"importArchive"> {
  return async (requests, ctx) => {
    const { header, chunks } = await headerThenChunks(requests, "an import");
    ctx.setWorkspace(header.workspace);
    await deps.workspaces.get(header.workspace);
    const into = parsePath(header.path);
    await deps.reserve.ensure();
    const result = await deps.snapshots.importArchive(header.workspace, into, chunks, {
      signal: ctx.signal,
      quota: { tokenQuota: ctx.tokenQuota() },
      record: (merged) => journalReplacedTree(deps, ctx, header.workspace, displayPath(into), merged),
    });
    ctx.committed();
    return { fileCount: BigInt(result.fileCount), sizeBytes: BigInt(result.sizeBytes) };
  };
}
