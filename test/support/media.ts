// Real images and PDFs for the tests, made here: images with sharp, PDFs by
// hand (a valid file: objects, a cross-reference table with their offsets, a
// trailer), and hostile ones made from them (cut short, a header that lies).
import { randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";
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
  const objects: string[] = ["<< /Type /Catalog /Pages 2 0 R >>", `<< /Type /Pages /Kids [${pages.map((_, i) => `${3 + i * 2} 0 R`).join(" ")}] /Count ${pages.length} >>`];
  const font = 3 + pages.length * 2;
  pages.forEach((text, i) => {
    const ops = text === "" ? "" : text.split("\n").map((line, j) => `BT /F1 12 Tf 72 ${720 - j * 16} Td (${line.replace(/[\\()]/g, (c) => `\\${c}`)}) Tj ET`).join("\n");
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${4 + i * 2} 0 R /Resources << /Font << /F1 ${font} 0 R >> >> >>`);
    objects.push(`<< /Length ${Buffer.byteLength(ops, "latin1")} >>\nstream\n${ops}\nendstream`);
  });
  objects.push("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>");
  let out = "%PDF-1.4\n";
  const offsets = objects.map((object, i) => {
    const at = Buffer.byteLength(out, "latin1");
    out += `${i + 1} 0 obj\n${object}\nendobj\n`;
    return at;
  });
  const xref = Buffer.byteLength(out, "latin1");
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}
