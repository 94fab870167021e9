import { readFile } from "../../tools/read.js";
import { fileInfo } from "../convert.js";
import type { Deps, FilesHandler } from "../types.js";

export function readHandler(deps: Deps): FilesHandler<"read"> {
  return async function* (request, ctx) {
    const workspace = await deps.workspaces.get(request.workspace);
    const window = readFile(workspace, request.path, request, deps.maxReadBytes, ctx.signal, deps.lineIndex);
    for (;;) {
      const next = await window.next();
      if (next.done) {
        const trailer = next.value;
        yield {
          event: {
            case: "trailer",
            value: {
              linesReturned: BigInt(trailer.linesReturned),
              bytesReturned: BigInt(trailer.bytesReturned),
              nextLine: BigInt(trailer.nextLine),
              truncated: trailer.truncated,
              eof: trailer.eof,
              lineCut: trailer.lineCut,
              totalLines: trailer.totalLines === undefined ? undefined : BigInt(trailer.totalLines),
            },
          },
        };
        return;
      }
      const part = next.value;
      if ("text" in part) {
        yield { event: { case: "chunk", value: { firstLine: BigInt(part.firstLine), text: part.text } } };
      } else {
        const totalLines = part.totalLines === undefined ? undefined : BigInt(part.totalLines);
        yield { event: { case: "header", value: { file: fileInfo(part.entry), encoding: part.encoding, totalLines } } };
      }
    }
  };
}
