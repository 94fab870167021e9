import { editFile } from "../../tools/edit.js";
import type { Deps, FilesHandler } from "../types.js";
import { recorderOf } from "../recorder.js";

export function editHandler(deps: Deps): FilesHandler<"edit"> {
  return async (request, ctx) => {
    const workspace = await deps.workspaces.get(request.workspace);
    const result = await editFile(workspace, {
      path: request.path,
      edits: request.edits.map((edit) => ({ oldText: edit.oldText, newText: edit.newText, replaceAll: edit.replaceAll })),
      dryRun: request.dryRun,
      ifVersion: request.ifVersion || undefined,
      encoding: request.encoding,
    }, await recorderOf(deps, ctx), ctx.signal, await deps.quotas.gate(workspace, ctx.tokenQuota()));
    if (!request.dryRun) ctx.committed();
    return { ...result, replacements: BigInt(result.replacements) };
  };
}
