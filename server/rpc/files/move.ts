import { movePath } from "../../tools/mutations.js";
import { fileInfo } from "../convert.js";
import type { Deps, FilesHandler } from "../types.js";
import { recorderOf } from "../recorder.js";

export function moveHandler(deps: Deps): FilesHandler<"move"> {
  return async (request, ctx) => {
    const workspace = await deps.workspaces.get(request.workspace);
    const moved = await movePath(workspace, request.source, request.destination, {
      overwrite: request.overwrite,
      createDirs: request.createDirs ?? true,
      ifVersion: request.ifVersion || undefined,
    }, await recorderOf(deps, ctx), ctx.signal, await deps.quotas.gate(workspace, ctx.tokenQuota()));
    ctx.committed();
    return { source: moved.source, destination: moved.destination, file: fileInfo(moved.entry) };
  };
}
