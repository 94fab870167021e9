import { readMedia } from "../../tools/media.js";
import { TRANSFER_CHUNK_BYTES } from "../../tools/transfer.js";
import { fileInfo } from "../convert.js";
import { readSource } from "../read-source.js";
import type { Deps, FilesHandler } from "../types.js";

export function readMediaHandler(deps: Deps): FilesHandler<"readMedia"> {
  return async function* (request, ctx) {
    const source = await readSource(deps, request, ctx.signal);
    const read = await readMedia(source, request.path, request, ctx.signal);
    const file = fileInfo(read.entry);
    if ("image" in read) {
      const { image } = read;
      const info = { mediaType: image.mediaType, size: BigInt(image.data.length), width: image.width, height: image.height, originalWidth: image.originalWidth, originalHeight: image.originalHeight, downscaled: image.downscaled };
      yield { event: { case: "header", value: { file, mediaType: read.mediaType, image: info } } };
      for (let at = 0; at < image.data.length; at += TRANSFER_CHUNK_BYTES) yield { event: { case: "imageData", value: { data: image.data.subarray(at, at + TRANSFER_CHUNK_BYTES) } } };
      yield { event: { case: "trailer", value: { eof: true } } };
      return;
    }
    const { pdf } = read;
    yield { event: { case: "header", value: { file, mediaType: read.mediaType, pageCount: BigInt(pdf.pageCount) } } };
    for (const page of pdf.pages) yield { event: { case: "page", value: { number: BigInt(page.number), text: page.text, cut: page.cut } } };
    yield { event: { case: "trailer", value: { pagesReturned: BigInt(pdf.pages.length), nextPage: BigInt(pdf.nextPage), truncated: pdf.truncated, eof: pdf.nextPage === 0 } } };
  };
}
