// An image as a model can take it: the file's bytes when they are within the
// caps, else a smaller image of it (sharp, libvips), re-encoded as JPEG when
// that is what fits. Every image is decoded whole first, so a truncated or
// damaged one is refused (MEDIA_UNREADABLE) rather than passed on. No I/O.
import sharp, { type Sharp } from "sharp";
import { fail, FileToolsError } from "../errors.js";
import type { MediaType } from "./kind.js";

/** Pixels an image may have: past this a decode could take gigabytes (a "decompression bomb"). */
export const MAX_IMAGE_PIXELS = 50_000_000;
/** The smallest longer side a downscale goes to before it gives up. */
const MIN_SIDE = 64;
/** JPEG quality of a re-encoded image. */
const JPEG_QUALITY = 80;

// libvips keeps recent operations cached (memory a daemon does not need back).
sharp.cache(false);
// sharp runs each image on a thread of libuv's pool, the one the daemon's file
// system calls share: one image at a time, on one libvips thread, leaves the
// rest of the pool to them however many images are asked for at once.
sharp.concurrency(1);
let queue: Promise<unknown> = Promise.resolve();
function oneAtATime<T>(work: () => Promise<T>): Promise<T> {
  const done = queue.then(work, work);
  queue = done.catch(() => undefined);
  return done;
}

export interface FittedImage {
  mediaType: MediaType;
  data: Buffer;
  width: number;
  height: number;
  originalWidth: number;
  originalHeight: number;
  downscaled: boolean;
}

/** `data` (an image of `mediaType`) within `maxBytes` and `maxSide` pixels on its longer side. */
export function fitImage(path: string, mediaType: MediaType, data: Buffer, caps: { maxBytes: number; maxSide: number }): Promise<FittedImage> {
  return oneAtATime(() => fit(path, mediaType, data, caps));
}

async function fit(path: string, mediaType: MediaType, data: Buffer, caps: { maxBytes: number; maxSide: number }): Promise<FittedImage> {
  const open = (): Sharp => sharp(data, { failOn: "error", limitInputPixels: MAX_IMAGE_PIXELS, animated: false });
  const { width, height } = await decoded(path, data, open);
  const original = { originalWidth: width, originalHeight: height };
  if (data.length <= caps.maxBytes && Math.max(width, height) <= caps.maxSide) {
    return { mediaType, data, width, height, ...original, downscaled: false };
  }
  // The same format where it can hold a still image of that size; a GIF becomes a PNG (its first frame).
  let format: "png" | "jpeg" | "webp" = mediaType === "image/jpeg" ? "jpeg" : mediaType === "image/webp" ? "webp" : "png";
  let side = Math.min(caps.maxSide, Math.max(width, height));
  for (;;) {
    // rotate(): upright by its EXIF orientation, which the new image (written without metadata) would lose.
    const resized = open().rotate().resize({ width: side, height: side, fit: "inside", withoutEnlargement: true });
    const encoded = format === "png" ? resized.png() : format === "webp" ? resized.webp({ quality: JPEG_QUALITY }) : resized.flatten({ background: "#ffffff" }).jpeg({ quality: JPEG_QUALITY });
    const { data: out, info } = await encoded.toBuffer({ resolveWithObject: true }).catch((error: unknown) => unreadable(path, error));
    if (out.length <= caps.maxBytes) {
      return { mediaType: `image/${format}` as MediaType, data: out, width: info.width, height: info.height, ...original, downscaled: true };
    }
    if (format === "png") format = "jpeg";
    else if (side > MIN_SIDE) side = Math.max(MIN_SIDE, Math.floor(side / 2));
    else fail("MEDIA_UNREADABLE", `${path} does not fit in ${caps.maxBytes} bytes even at ${MIN_SIDE} pixels`);
  }
}

/** The image's size, once every pixel has decoded (stats() reads them all, keeping none). */
async function decoded(path: string, data: Buffer, open: () => Sharp): Promise<{ width: number; height: number }> {
  try {
    // The header first, with no pixel limit (it decodes nothing): a size past the limit is named, not just refused.
    const { width, height } = await sharp(data, { limitInputPixels: false }).metadata();
    if (!width || !height) fail("MEDIA_UNREADABLE", `${path} is an image without a size`);
    if (width * height > MAX_IMAGE_PIXELS) fail("MEDIA_UNREADABLE", `${path} is ${width}×${height} pixels, more than the ${MAX_IMAGE_PIXELS.toLocaleString("en")} an image may have`);
    await open().stats();
    return { width, height };
  } catch (error) {
    return unreadable(path, error);
  }
}

function unreadable(path: string, error: unknown): never {
  if (error instanceof FileToolsError) throw error;
  // libvips's message names no file (the bytes came from memory): say what it found, on one line.
  const detail = error instanceof Error ? error.message.split("\n")[0]!.trim() : String(error);
  fail("MEDIA_UNREADABLE", `${path} cannot be decoded as an image (${detail || "damaged"})`);
}
