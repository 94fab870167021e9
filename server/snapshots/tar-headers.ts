// Tar header records, encoded here rather than by a streaming packer so that
// a member's header can be its own gzip member, apart from its content (the
// seekable format, seekable.ts): the content's members are then copied byte
// for byte into any tarball that needs them, under whatever name.
//
// ustar headers with GNU's magic; a name or link target longer than its
// field (100 bytes) goes in a GNU long-name record before the header ('L'
// for the name, 'K' for the target), its exact bytes, which GNU tar, bsdtar
// and our extract (extract.ts) read back byte for byte; the field then holds
// a printable stand-in. A size past the 11 octal digits (8 GiB), or an
// mtime past them (2242) or before 1970, is in GNU's base-256 form, which
// GNU tar, bsdtar and node-tar read. No owner ids or names.
import { bytesOfName } from "../workspace/names.js";

export const TAR_BLOCK = 512;
/** What ends a tar stream: two zero blocks. */
export const END_OF_ARCHIVE = Buffer.alloc(2 * TAR_BLOCK);
const NAME_FIELD = 100;
/** The largest number a 12-byte field holds in octal with its terminator. */
const MAX_OCTAL = 8 ** 11 - 1;

export interface MemberHeader {
  /** The member's name: its components joined by "/", held names (workspace/names.ts). */
  name: string;
  type: "file" | "directory" | "symlink";
  /** Permission bits. */
  mode: number;
  /** Content bytes (files only). */
  size: number;
  /** Seconds since the epoch. */
  mtime: number;
  /** A link's target. */
  linkname?: string;
}

/** Zero bytes that pad `size` bytes of content to whole blocks. */
export function paddingOf(size: number): number {
  return (TAR_BLOCK - (size % TAR_BLOCK)) % TAR_BLOCK;
}

/** The records that start a member: long-name records where needed, then its header. */
export function headerRecords(member: MemberHeader): Buffer {
  const name = Buffer.concat([bytesOfName(member.name), Buffer.from(member.type === "directory" ? "/" : "")]);
  const link = member.linkname === undefined ? Buffer.alloc(0) : bytesOfName(member.linkname);
  const records: Buffer[] = [];
  if (name.length > NAME_FIELD) records.push(longNameRecord("L", name));
  if (link.length > NAME_FIELD) records.push(longNameRecord("K", link));
  const header = Buffer.alloc(TAR_BLOCK);
  (name.length > NAME_FIELD ? standIn(name) : name).copy(header, 0);
  writeOctal(header, 100, 8, member.mode & 0o7777);
  writeOctal(header, 108, 8, 0);
  writeOctal(header, 116, 8, 0);
  writeNumber(header, 124, member.type === "file" ? member.size : 0);
  writeNumber(header, 136, Math.floor(member.mtime));
  header.write(member.type === "file" ? "0" : member.type === "directory" ? "5" : "2", 156, "ascii");
  (link.length > NAME_FIELD ? standIn(link) : link).copy(header, 157);
  finish(header);
  records.push(header);
  return Buffer.concat(records);
}

/** A GNU long-name record: a "././@LongLink" header of type `type`, then the bytes (NUL-terminated, padded). */
export function longNameRecord(type: "L" | "K", bytes: Buffer): Buffer {
  const size = bytes.length + 1;
  const record = Buffer.alloc(TAR_BLOCK + Math.ceil(size / TAR_BLOCK) * TAR_BLOCK);
  record.write("././@LongLink", 0, "ascii");
  writeOctal(record, 100, 8, 0o644);
  writeOctal(record, 108, 8, 0);
  writeOctal(record, 116, 8, 0);
  writeOctal(record, 124, 12, size);
  writeOctal(record, 136, 12, 0);
  record.write(type, 156, "ascii");
  finish(record);
  bytes.copy(record, TAR_BLOCK);
  return record;
}

/** The last bytes of a long name, printable, for readers that know no long names. */
function standIn(bytes: Buffer): Buffer {
  const shown = Buffer.from(bytes.subarray(-(NAME_FIELD - 1)).map((byte) => (byte >= 0x20 && byte <= 0x7e ? byte : 0x5f)));
  return shown[0] === 0x2f ? Buffer.concat([Buffer.from("_"), shown.subarray(1)]) : shown;
}

function writeOctal(header: Buffer, offset: number, length: number, value: number): void {
  header.write(value.toString(8).padStart(length - 1, "0") + "\0", offset, length, "ascii");
}

/**
 * A 12-byte numeric field (size, mtime): octal, or GNU's base-256 past it:
 * big-endian two's complement over the field, its first byte 0x80 (0xff for
 * a negative number).
 */
function writeNumber(header: Buffer, offset: number, value: number): void {
  if (value >= 0 && value <= MAX_OCTAL) return writeOctal(header, offset, 12, value);
  let rest = BigInt(value);
  for (let i = offset + 11; i > offset; i--) {
    header[i] = Number(BigInt.asUintN(8, rest));
    rest >>= 8n;
  }
  header[offset] = value < 0 ? 0xff : 0x80;
}

/** GNU magic and version, then the checksum (counting its own field as spaces). */
function finish(header: Buffer): void {
  header.write("ustar  \0", 257, "ascii");
  header.fill(0x20, 148, 156);
  let sum = 0;
  for (let i = 0; i < TAR_BLOCK; i++) sum += header[i]!;
  header.write(sum.toString(8).padStart(6, "0") + "\0 ", 148, "ascii");
}
