import { statPath } from "../../tools/stat.js";
import { fileInfo } from "../convert.js";
import { readSource } from "../read-source.js";
import type { Deps, FilesHandler } from "../types.js";

export function statHandler(deps: Deps): FilesHandler<"stat"> {
  return async (request, ctx) => {
    const source = await readSource(deps, request, ctx.signal);
    const result = await statPath(source, request.path, { detectBinary: request.detectBinary, countLines: request.countLines }, deps.lineIndex);
    return { file: fileInfo(result.entry, result) };
  };
}
