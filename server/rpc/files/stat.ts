import { statPath } from "../../tools/stat.js";
import { fileInfo } from "../convert.js";
import type { Deps, FilesHandler } from "../types.js";

export function statHandler(deps: Deps): FilesHandler<"stat"> {
  return async (request) => {
    const workspace = await deps.workspaces.get(request.workspace);
    const result = await statPath(workspace, request.path, { detectBinary: request.detectBinary, countLines: request.countLines }, deps.lineIndex);
    return { file: fileInfo(result.entry, result) };
  };
}
