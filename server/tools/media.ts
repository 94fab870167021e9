// ReadMedia: an image or a PDF as a model takes it (SPEC 4.1's Read is for
// text). The kind is decided by the file's first bytes; the file is read whole
// (at most MAX_MEDIA_FILE_BYTES), then an image is fitted to the caps
// (media/image.ts) and a PDF's pages are extracted in the worker pool
// (media/pdf-pool.ts).
import { fail } from "../errors.js";
import type { Entry } from "../workspace/entry.js";
import { parseFilePath } from "../workspace/paths.js";
import { isImage, mediaTypeOf, type MediaType } from "../media/kind.js";
import { fitImage, type FittedImage } from "../media/image.js";
import { pdfText } from "../media/pdf-pool.js";
import type { PdfText } from "../media/pdf-worker.js";
import { countArgument } from "./arguments.js";
import { openAndRead, type ReadSource } from "./source.js";

/** The largest file ReadMedia reads (it holds the file in memory to decode it). */
export const MAX_MEDIA_FILE_BYTES = 64 << 20;
/** An image's bytes at most: 5 MiB as base64, the most a model API takes. */
export const MAX_IMAGE_BYTES = (15 << 20) / 4;
export const DEFAULT_IMAGE_SIDE = 2000;
export const MAX_IMAGE_SIDE = 8000;
/** A PDF window's text at most (and by default). */
export const MAX_PDF_TEXT_BYTES = 1 << 20;
const READ_PIECE_BYTES = 1 << 20;

export interface ReadMediaOptions {
  startPage?: bigint;
  pageCount?: bigint;
  maxBytes?: bigint;
  maxImageBytes?: bigint;
  maxImageSide?: number;
}

export type MediaRead =
  | { entry: Entry; mediaType: MediaType; image: FittedImage }
  | { entry: Entry; mediaType: MediaType; pdf: PdfText };

export async function readMedia(source: ReadSource, rawPath: string, options: ReadMediaOptions, signal: AbortSignal): Promise<MediaRead> {
  const parts = parseFilePath(rawPath);
  const startPage = countArgument("start_page", options.startPage, 1);
  if (startPage < 1) fail("INVALID_ARGUMENT", "start_page is 1-based: it must be at least 1");
  const pageCount = options.pageCount === undefined ? undefined : countArgument("page_count", options.pageCount, 0);
  const maxBytes = Math.min(countArgument("max_bytes", options.maxBytes, 0) || MAX_PDF_TEXT_BYTES, MAX_PDF_TEXT_BYTES);
  const maxImageBytes = Math.min(countArgument("max_image_bytes", options.maxImageBytes, 0) || MAX_IMAGE_BYTES, MAX_IMAGE_BYTES);
  const maxSide = countArgument("max_image_side", options.maxImageSide, 0, MAX_IMAGE_SIDE) || DEFAULT_IMAGE_SIDE;

  const { file, read: media } = await openAndRead(source, parts, async (file) => {
    const mediaType = mediaTypeOf(await file.readAt(0, 16));
    if (!mediaType) fail("NOT_MEDIA", `${file.entry.path} is not a PNG, JPEG, GIF, WebP or PDF file`);
    if (file.size > MAX_MEDIA_FILE_BYTES) fail("QUOTA_EXCEEDED", `${file.entry.path} is ${file.size} bytes; ReadMedia reads files of at most ${MAX_MEDIA_FILE_BYTES} bytes`);
    const pieces: Buffer[] = [];
    let read = 0;
    for await (const piece of file.chunks(0, READ_PIECE_BYTES)) {
      signal.throwIfAborted();
      read += piece.length;
      if (read > MAX_MEDIA_FILE_BYTES) fail("QUOTA_EXCEEDED", `${file.entry.path} grew past ${MAX_MEDIA_FILE_BYTES} bytes while it was read`);
      pieces.push(piece);
    }
    return { mediaType, data: Buffer.concat(pieces) };
  });
  file.close();
  const { mediaType, data } = media;
  const path = file.entry.path;
  if (isImage(mediaType)) return { entry: file.entry, mediaType, image: await fitImage(path, mediaType, data, { maxBytes: maxImageBytes, maxSide }) };
  const task = { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), startPage, pageCount, maxBytes };
  return { entry: file.entry, mediaType, pdf: await pdfText(path, task, signal) };
}
