// Tarballs for tests: built member by member with tar-stream (makeTar), or
// written byte by byte (rawHeader, rawData, rawPax, END) to produce what no
// honest tool writes.
import { gzipSync } from "node:zlib";
import tar from "tar-stream";

const BLOCK = 512;

interface RawHeader {
  name?: string | Buffer;
  type?: string;
  size?: number;
  /** The size field's 12 bytes as written (overrides size). */
  sizeField?: string;
  linkname?: string | Buffer;
  prefix?: string;
}

/** One ustar header block, fields written as given, checksum computed. */
export function rawHeader(h: RawHeader): Buffer {
  const block = Buffer.alloc(BLOCK);
  const put = (value: string | Buffer, at: number) => (typeof value === "string" ? block.write(value, at, "latin1") : value.copy(block, at));
  put(h.name ?? "file.txt", 0);
  put("0000644\0", 100);
  put("0000000\0", 108);
  put("0000000\0", 116);
  put(h.sizeField ?? (h.size ?? 0).toString(8).padStart(11, "0") + "\0", 124);
  put("14000000000\0", 136);
  put(h.type ?? "0", 156);
  if (h.linkname !== undefined) put(h.linkname, 157);
  put("ustar\u000000", 257);
  if (h.prefix) put(h.prefix, 345);
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  put(sum.toString(8).padStart(6, "0") + "\0 ", 148);
  return block;
}

/** A member's data, padded to whole blocks. */
export function rawData(data: string | Buffer): Buffer {
  const bytes = Buffer.from(data);
  return Buffer.concat([bytes, Buffer.alloc((BLOCK - (bytes.length % BLOCK)) % BLOCK)]);
}

/** A pax extended header ('x', or 'g' for global) with these records. */
export function rawPax(records: Record<string, string>, type = "x"): Buffer {
  const body = Object.entries(records)
    .map(([key, value]) => {
      const record = ` ${key}=${value}\n`;
      let length = record.length + 1;
      while (String(length).length + record.length !== length) length++;
      return `${length}${record}`;
    })
    .join("");
  return Buffer.concat([rawHeader({ name: "PaxHeader", type, size: Buffer.byteLength(body) }), rawData(body)]);
}

export const END = Buffer.alloc(2 * BLOCK);


export type Member = Partial<tar.Header> & { name: string; content?: string | Buffer };

/** A tarball built member by member, headers exactly as given. */
export async function makeTar(members: Member[], gzip = true): Promise<Buffer> {
  const pack = tar.pack();
  const parts: Buffer[] = [];
  const done = (async () => {
    for await (const chunk of pack) parts.push(Buffer.from(chunk as Uint8Array));
  })();
  for (const { content, ...header } of members) {
    await new Promise<void>((resolve, reject) => {
      const body = content === undefined ? undefined : Buffer.from(content);
      const cb = (error?: Error | null) => (error ? reject(error) : resolve());
      if (body) pack.entry({ ...header, size: body.length }, body, cb);
      else pack.entry(header, cb);
    });
  }
  pack.finalize();
  await done;
  const raw = Buffer.concat(parts);
  return gzip ? gzipSync(raw) : raw;
}

