// Which media a file is, from its first bytes (never its name): the images
// and documents ReadMedia gives a model. No I/O.

/** The media types ReadMedia reads. */
export type MediaType = "image/png" | "image/jpeg" | "image/gif" | "image/webp" | "application/pdf";

const ascii = (s: string): number[] => [...s].map((c) => c.charCodeAt(0));
const startsWith = (head: Uint8Array, bytes: readonly number[], offset = 0): boolean =>
  head.length >= offset + bytes.length && bytes.every((b, i) => head[offset + i] === b);

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const JPEG = [0xff, 0xd8, 0xff];

/** The media type of a file whose first bytes are `head` (16 are enough); undefined for any other file. */
export function mediaTypeOf(head: Uint8Array): MediaType | undefined {
  if (startsWith(head, PNG)) return "image/png";
  if (startsWith(head, JPEG)) return "image/jpeg";
  if (startsWith(head, ascii("GIF87a")) || startsWith(head, ascii("GIF89a"))) return "image/gif";
  if (startsWith(head, ascii("RIFF")) && startsWith(head, ascii("WEBP"), 8)) return "image/webp";
  if (startsWith(head, ascii("%PDF-"))) return "application/pdf";
  return undefined;
}

export const isImage = (type: MediaType): boolean => type.startsWith("image/");
