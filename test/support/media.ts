// Real images and PDFs for the tests, made here: images with sharp, PDFs by
// hand (a valid file: objects, a cross-reference table with their offsets, a
// trailer), and hostile ones made from them (cut short, a header that lies, a
// decompression bomb, a page tree of a million pages).
import { randomBytes } from "node:crypto";
import { constants, crc32, deflateRawSync } from "node:zlib";
import sharp from "sharp";

/** A solid image of `width`×`height` in `format`. */
export function solidImage(width: number, height: number, format: "png" | "jpeg" | "gif" | "webp", colour = "#ff0000"): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: colour } })[format]().toBuffer();
}

/** Noise that compresses badly: a PNG of it is about 3 bytes a pixel. */
export function noisyPng(width: number, height: number): Promise<Buffer> {
  const raw = randomBytes(width * height * 3);
  return sharp(raw, { raw: { width, height, channels: 3 } }).png({ compressionLevel: 9 }).toBuffer();
}

/** A PNG whose header claims `width`×`height` (its CRC fixed, so only the size lies). */
export function pngClaiming(png: Buffer, width: number, height: number): Buffer {
  const out = Buffer.from(png);
  out.writeUInt32BE(width, 16);
  out.writeUInt32BE(height, 20);
  out.writeUInt32BE(crc32(out.subarray(12, 29)), 29); // IHDR: type and 13 bytes of data
  return out;
}

/** A PDF of one page per string, each line of it a line of Helvetica text (WinAnsi: latin1 characters). */
export function makePdf(pages: string[]): Buffer {
  const font = 3 + pages.length * 2;
  const objects: Array<string | Buffer> = [CATALOG, `<< /Type /Pages /Kids [${pages.map((_, i) => `${3 + i * 2} 0 R`).join(" ")}] /Count ${pages.length} >>`];
  pages.forEach((text, i) => {
    const ops = text === "" ? "" : text.split("\n").map((line, j) => `BT /F1 12 Tf 72 ${720 - j * 16} Td (${line.replace(/[\\()]/g, (c) => `\\${c}`)}) Tj ET`).join("\n");
    objects.push(page(4 + i * 2, font), pdfStream("", Buffer.from(ops, "latin1")));
  });
  return pdfFile([...objects, HELVETICA]);
}

/** A PDF of one page whose content stream is `content` deflated (a zlib stream: deflatedRepeat's). */
export function pdfWithDeflatedPage(content: Buffer): Buffer {
  return pdfFile([CATALOG, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", page(4, 5), pdfStream("/Filter /FlateDecode", content), HELVETICA]);
}

/** A PDF whose page tree lists `count` pages, all one page object (a line of text). */
export function pdfOfManyPages(count: number): Buffer {
  const kids = "3 0 R ".repeat(count);
  return pdfFile([CATALOG, `<< /Type /Pages /Kids [${kids}] /Count ${count} >>`, page(4, 5), pdfStream("", Buffer.from("BT /F1 12 Tf 72 720 Td (x) Tj ET")), HELVETICA]);
}

/**
 * A zlib stream of `chunk` repeated `times` times, made without holding what
 * it inflates to (a decompression bomb of gigabytes from a few megabytes):
 * the chunk is deflated once, flushed so that its blocks need nothing before
 * them, and repeated; the checksum is combined as zlib's adler32_combine does.
 */
export function deflatedRepeat(chunk: Buffer, times: number): Buffer {
  const blocks = deflateRawSync(chunk, { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  const [chunkA, chunkB] = adler32(chunk);
  let a = 1;
  let b = 0;
  for (let i = 0; i < times; i++) {
    b = (b + chunkB + (chunk.length % ADLER_BASE) * (a - 1)) % ADLER_BASE;
    a = (a + chunkA - 1) % ADLER_BASE;
  }
  const checksum = Buffer.alloc(4);
  checksum.writeUInt32BE(((b << 16) | a) >>> 0);
  const header = Buffer.from([0x78, 0xda]);
  return Buffer.concat([header, ...Array<Buffer>(times).fill(blocks), deflateRawSync(Buffer.alloc(0)), checksum]);
}

const ADLER_BASE = 65521;
function adler32(data: Buffer): [number, number] {
  let a = 1;
  let b = 0;
  for (const byte of data) {
    a = (a + byte) % ADLER_BASE;
    b = (b + a) % ADLER_BASE;
  }
  return [a, b];
}

const CATALOG = "<< /Type /Catalog /Pages 2 0 R >>";
const HELVETICA = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>";
const page = (contents: number, font: number) =>
  `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${contents} 0 R /Resources << /Font << /F1 ${font} 0 R >> >> >>`;
const pdfStream = (dictionary: string, data: Buffer) =>
  Buffer.concat([Buffer.from(`<< ${dictionary}${dictionary && " "}/Length ${data.length} >>\nstream\n`, "latin1"), data, Buffer.from("\nendstream", "latin1")]);

/** A valid PDF of `objects` (numbered from 1, the first the catalogue): a cross-reference table with their offsets, a trailer. */
function pdfFile(objects: Array<string | Buffer>): Buffer {
  const parts = [Buffer.from("%PDF-1.4\n", "latin1")];
  let size = parts[0]!.length;
  const offsets = objects.map((object, i) => {
    const at = size;
    const body = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`, "latin1"), typeof object === "string" ? Buffer.from(object, "latin1") : object, Buffer.from("\nendobj\n", "latin1")]);
    parts.push(body);
    size += body.length;
    return at;
  });
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${size}\n%%EOF\n`, "latin1"));
  return Buffer.concat(parts);
}
