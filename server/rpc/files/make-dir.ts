import { makeDirectory } from "../../tools/mutations.js";
import type { Deps, FilesHandler } from "../types.js";
import { recorderOf } from "../recorder.js";

export function makeDirHandler(deps: Deps): FilesHandler<"makeDir"> {
  return async (request, ctx) => {
    const workspace = await deps.workspaces.get(request.workspace);
    const made = await makeDirectory(workspace, request.path, { parents: request.parents ?? true }, ctx.signal, await deps.quotas.gate(workspace, ctx.tokenQuota()), await recorderOf(deps, ctx));
    ctx.committed();
    return made;
  };
}
