import { uploadFile } from "../../tools/transfer.js";
import { writeMode } from "../convert.js";
import { headerThenChunks } from "../header-then-chunks.js";
import type { Deps, FilesHandler } from "../types.js";
import { recorderOf } from "../recorder.js";

export function uploadHandler(deps: Deps): FilesHandler<"upload"> {
  return async (requests, ctx) => {
    const { header, chunks } = await headerThenChunks(requests, "an upload");
    ctx.setWorkspace(header.workspace);
    const workspace = await deps.workspaces.get(header.workspace);
    const target = {
      path: header.path,
      mode: writeMode(header.mode),
      createDirs: header.createDirs ?? true,
      ifVersion: header.ifVersion || undefined,
      sha256: header.sha256,
    };
    const result = await uploadFile(workspace, target, chunks, await recorderOf(deps, ctx), ctx.signal, await deps.quotas.gate(workspace, ctx.tokenQuota()));
    ctx.committed();
    return { path: result.entry.path, size: result.entry.size, created: result.created, sha256: result.sha256, version: result.entry.version };
  };
}
