import { PatchAction } from "@filetools/proto/filetools/v1/files_pb.js";
import { applyPatch } from "../../patch/patch.js";
import type { Deps, FilesHandler } from "../types.js";
import { recorderOf } from "../recorder.js";

const ACTIONS = { added: PatchAction.ADDED, updated: PatchAction.UPDATED, deleted: PatchAction.DELETED, moved: PatchAction.MOVED } as const;

export function applyPatchHandler(deps: Deps): FilesHandler<"applyPatch"> {
  return async (request, ctx) => {
    const workspace = await deps.workspaces.get(request.workspace);
    const files = await applyPatch(workspace, deps.patches, { patch: request.patch, dryRun: request.dryRun }, await recorderOf(deps, ctx), ctx.signal, await deps.quotas.gate(workspace, ctx.tokenQuota()));
    if (!request.dryRun) ctx.committed();
    return { files: files.map((f) => ({ ...f, action: ACTIONS[f.action] })) };
  };
}
