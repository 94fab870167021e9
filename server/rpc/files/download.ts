import { downloadFile } from "../../tools/transfer.js";
import { fileInfo } from "../convert.js";
import type { Deps, FilesHandler } from "../types.js";

export function downloadHandler(deps: Deps): FilesHandler<"download"> {
  return async function* (request, ctx) {
    const workspace = await deps.workspaces.get(request.workspace);
    for await (const part of downloadFile(workspace, request.path, ctx.signal)) {
      if (Buffer.isBuffer(part)) yield { event: { case: "chunk", value: { data: part } } };
      else yield { event: { case: "header", value: { file: fileInfo(part.entry), size: BigInt(part.size), sha256: part.sha256 } } };
    }
  };
}
