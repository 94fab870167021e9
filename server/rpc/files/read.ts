import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { ReadChunkSchema, ReadResponseSchema } from "@filetools/proto/filetools/v1/files_pb.js";
import { EncodedMessage } from "../../grpc/index.js";
import { readFile } from "../../tools/read.js";
import { fileInfo } from "../convert.js";
import { readSource } from "../read-source.js";
import type { Deps, FilesHandler } from "../types.js";

export function readHandler(deps: Deps): FilesHandler<"read"> {
  return async function* (request, ctx) {
    const source = await readSource(deps, request, ctx.signal);
    const window = readFile(source, request.path, { ...request, utf8Chunks: true }, deps.maxReadBytes, ctx.signal, deps.lineIndex);
    try {
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
          yield part.utf8 ? encodedChunk(part.firstLine, part.utf8) : { event: { case: "chunk", value: { firstLine: BigInt(part.firstLine), text: part.text } } };
        } else {
          const totalLines = part.totalLines === undefined ? undefined : BigInt(part.totalLines);
          yield { event: { case: "header", value: { file: fileInfo(part.entry), encoding: part.encoding, totalLines } } };
        }
      }
    } finally {
      // Cancelled at a yield: the file's descriptor closes.
      await window.return(undefined as never);
    }
  };
}

/**
 * ReadResponse{chunk: {first_line, text}} with the text's UTF-8 bytes as they
 * are: the field headers are written, then the text is copied once.
 */
function encodedChunk(firstLine: number, utf8: Buffer): EncodedMessage {
  const chunkHead = new BinaryWriter()
    .tag(ReadChunkSchema.field.firstLine!.number, WireType.Varint)
    .int64(firstLine)
    .tag(ReadChunkSchema.field.text!.number, WireType.LengthDelimited)
    .uint32(utf8.length)
    .finish();
  const responseHead = new BinaryWriter()
    .tag(ReadResponseSchema.field.chunk!.number, WireType.LengthDelimited)
    .uint32(chunkHead.length + utf8.length)
    .finish();
  return new EncodedMessage(Buffer.concat([responseHead, chunkHead, utf8]));
}
