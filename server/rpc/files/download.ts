import { downloadFile } from "../../tools/transfer.js";
import { fileInfo } from "../convert.js";
import { readSource } from "../read-source.js";
import type { Deps, FilesHandler } from "../types.js";

export function downloadHandler(deps: Deps): FilesHandler<"download"> {
  return async function* (request, ctx) {
    const source = await readSource(deps, request, ctx.signal);
    for await (const part of downloadFile(source, request.path, ctx.signal)) {
      if (Buffer.isBuffer(part)) yield { event: { case: "chunk", value: { data: part } } };
      else yield { event: { case: "header", value: { file: fileInfo(part.entry), size: BigInt(part.size), sha256: part.sha256 } } };
    }
  };
}
