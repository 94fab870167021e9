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
    const result = await deps.snapshots.importArchive(header.workspace, into, chunks, ctx.signal, { tokenQuota: ctx.tokenQuota() });
    ctx.committed();
    await journalReplacedTree(deps, ctx, header.workspace, displayPath(into));
    return { fileCount: BigInt(result.fileCount), sizeBytes: BigInt(result.sizeBytes) };
  };
}
