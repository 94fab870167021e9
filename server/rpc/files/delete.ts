import { deletePath } from "../../tools/mutations.js";
import type { Deps, FilesHandler } from "../types.js";
import { recorderOf } from "../recorder.js";

export function deleteHandler(deps: Deps): FilesHandler<"delete"> {
  return async (request, ctx) => {
    const workspace = await deps.workspaces.get(request.workspace);
    const deleted = await deletePath(workspace, request.path, { recursive: request.recursive, ifVersion: request.ifVersion || undefined }, await recorderOf(deps, ctx), ctx.signal, await deps.quotas.gate(workspace, ctx.tokenQuota()));
    ctx.committed();
    return deleted;
  };
}
