// A strict reading of the tar format, in front of tar-stream (which is lenient:
// it stops a name at its first NUL, reads the pax size "1e15" as 1, parses
// "12x" as octal 12, goes on reading members after the end-of-archive block,
// and applies a pax global path to every member). The guard sees every byte
// tar-stream will see and refuses what tar-stream could read differently from
// another tool, so what is extracted is what the archive says. It also counts
// members and content bytes as they stream, without creating anything, so a
// bomb is refused in the time it takes to read it (see extract.ts: the first
// of its two passes is the guard alone). No I/O here.
import { FileToolsError } from "../errors.js";

export interface GuardLimits {
  /** Total bytes of regular-file content. */
  maxBytes: number;
  /** Members (not counting pax and GNU long-name records). */
  maxMembers: number;
}

/** Which failure: the archive says something refused or ambiguous, or it is cut off or damaged. */
export type GuardFailure = "refused" | "damaged";

/** An archive the guard did not accept; the caller turns it into a FileToolsError with the right reason. */
export class ArchiveProblem extends Error {
  constructor(
    readonly kind: GuardFailure,
    message: string,
  ) {
    super(message);
  }
}

const BLOCK = 512;
const ZERO_BLOCK = Buffer.alloc(BLOCK);
/** Bigger pax or GNU long-name records are refused (tar-stream's own ceiling is 1 MiB too). */
const MAX_META_BYTES = 1 << 20;
/** Typeflags accepted at all: regular files, links, devices and FIFOs (refused later by name), directories, pax, GNU long names. */
const DATA_TYPES = new Set(["0", "\0", "7"]);
const EMPTY_TYPES = new Set(["1", "2", "3", "4", "5", "6"]);
const META_TYPES = new Set(["x", "g", "L", "K"]);
/** Pax keys whose value must be a decimal integer, and those that may carry a fraction (times). */
const PAX_INTEGERS = new Set(["size", "uid", "gid", "devmajor", "devminor"]);
const PAX_TIMES = new Set(["mtime", "atime", "ctime"]);
/** Pax keys refused in a global header: they would apply to every member. */
const GLOBAL_REFUSED = new Set(["path", "linkpath", "size"]);

type State = "header" | "data" | "meta" | "end";

export class TarGuard {
  private state: State = "header";
  /** Bytes of the current header or meta record gathered so far. */
  private readonly header = Buffer.alloc(BLOCK);
  private headerFill = 0;
  private meta: Buffer[] = [];
  private metaFill = 0;
  private metaType = "";
  /** Bytes of the current meta record without its padding. */
  private metaSize = 0;
  /** Bytes left in the current member's data (padding included). */
  private remaining = 0;
  /** Records that apply to the next member. */
  private pending: { pax?: Map<string, string>; longName?: Buffer; longLink?: Buffer } = {};
  private seenAny = false;
  members = 0;
  contentBytes = 0;

  /**
   * With `mtimes`, each member's header time field (seconds, GNU base-256
   * read exactly, negative ones too) is pushed there in archive order, the
   * members tar-stream emits (not pax or long-name records): tar-stream
   * reads a negative base-256 time one second late, and -1 as 0.
   */
  constructor(
    private readonly limits: GuardLimits,
    private readonly mtimes?: number[],
  ) {}

  /** Takes the next bytes of the (decompressed) archive; throws ArchiveProblem. */
  write(bytes: Uint8Array): void {
    const chunk = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let offset = 0;
    if (chunk.length > 0) this.seenAny = true;
    while (offset < chunk.length) {
      switch (this.state) {
        case "header": {
          if (this.headerFill === 0 && chunk.length - offset >= BLOCK) {
            // A whole header in the chunk: read in place.
            offset += BLOCK;
            this.onHeader(chunk.subarray(offset - BLOCK, offset));
            break;
          }
          const take = Math.min(BLOCK - this.headerFill, chunk.length - offset);
          this.header.set(chunk.subarray(offset, offset + take), this.headerFill);
          this.headerFill += take;
          offset += take;
          if (this.headerFill === BLOCK) {
            this.headerFill = 0;
            this.onHeader(this.header);
          }
          break;
        }
        case "data": {
          const take = Math.min(this.remaining, chunk.length - offset);
          this.remaining -= take;
          offset += take;
          if (this.remaining === 0) this.state = "header";
          break;
        }
        case "meta": {
          const take = Math.min(this.remaining, chunk.length - offset);
          // Only the record's own bytes are kept, not its padding.
          const keep = Math.max(0, Math.min(take, this.metaSize - this.metaFill));
          if (keep > 0) this.meta.push(Buffer.from(chunk.subarray(offset, offset + keep)));
          this.metaFill += keep;
          this.remaining -= take;
          offset += take;
          if (this.remaining === 0) {
            this.state = "header";
            this.onMeta(Buffer.concat(this.meta));
            this.meta = [];
            this.metaFill = 0;
          }
          break;
        }
        case "end": {
          for (; offset < chunk.length; offset++) {
            if (chunk[offset] !== 0) refused("the archive has data after its end-of-archive block");
          }
          break;
        }
      }
    }
  }

  /** The archive ended: throws ArchiveProblem when it is empty or cut off. */
  end(): void {
    if (!this.seenAny) refused("the archive is empty (zero bytes)");
    if (this.state !== "end") damaged("the archive is truncated (it ends before its end-of-archive block)");
  }

  private onHeader(block: Buffer): void {
    if (block.equals(ZERO_BLOCK)) {
      if (this.pending.pax || this.pending.longName || this.pending.longLink) refused("the archive ends after a pax or long-name record, without its member");
      this.state = "end";
      return;
    }
    const stored = octal(block, 148, 8, "checksum");
    if (stored !== checksum(block)) damaged("a tar header's checksum does not match (the archive is damaged, or not a tar archive)");
    const magic = block.toString("latin1", 257, 263);
    const version = block.toString("latin1", 263, 265);
    const ustar = magic === "ustar\0" && version === "00";
    const gnu = magic === "ustar " && version === " \0";
    if (!ustar && !gnu) refused("a tar header is in an unknown format (neither ustar nor GNU)");
    const type = String.fromCharCode(block[156]!);
    textField(block, 0, 100, "name");
    textField(block, 157, 100, "link name");
    if (ustar) textField(block, 345, 155, "name prefix");
    for (const [at, length, what] of [
      [100, 8, "mode"],
      [108, 8, "uid"],
      [116, 8, "gid"],
      [329, 8, "devmajor"],
      [337, 8, "devminor"],
    ] as const) {
      numberField(block, at, length, what);
    }
    const mtime = numberField(block, 136, 12, "mtime");
    const headerSize = numberField(block, 124, 12, "size");
    if (headerSize < 0) refused("a tar header has a negative size");

    if (META_TYPES.has(type)) {
      if (headerSize > MAX_META_BYTES) refused(`a pax or long-name record is larger than ${MAX_META_BYTES} bytes`);
      if ((type === "x" && this.pending.pax) || (type === "L" && this.pending.longName) || (type === "K" && this.pending.longLink)) {
        refused("the archive has two pax or long-name records of one kind for one member");
      }
      this.metaType = type;
      this.metaSize = headerSize;
      this.remaining = padded(headerSize);
      this.state = this.remaining === 0 ? "header" : "meta";
      if (this.remaining === 0) this.onMeta(Buffer.alloc(0));
      return;
    }
    if (!DATA_TYPES.has(type) && !EMPTY_TYPES.has(type)) refused(`a tar member has the unsupported type ${JSON.stringify(type)}`);
    this.mtimes?.push(mtime);

    const pax = this.pending.pax;
    const size = pax?.has("size") ? Number(pax.get("size")) : headerSize;
    const pending = this.pending;
    this.pending = {};
    if (++this.members > this.limits.maxMembers) refused(`the archive has more than ${this.limits.maxMembers} members`);
    // tar-stream reads no data for a directory (or an old-style "name/" file), and data for every other type.
    const oldStyleDirectory = () => (pax?.get("path") ?? pending.longName?.toString("latin1") ?? ustarName(block, ustar)).endsWith("/");
    const noData = type === "5" || ((type === "0" || type === "\0") && size !== 0 && oldStyleDirectory());
    if ((noData || EMPTY_TYPES.has(type)) && size !== 0) refused("a tar member that holds no content (a directory or link) has a non-zero size");
    if (DATA_TYPES.has(type)) {
      this.contentBytes += size;
      if (this.contentBytes > this.limits.maxBytes) refused(`the archive holds more than ${this.limits.maxBytes} bytes`);
    }
    this.remaining = padded(size);
    this.state = this.remaining === 0 ? "header" : "data";
  }

  private onMeta(record: Buffer): void {
    switch (this.metaType) {
      case "L":
        this.pending.longName = longName(record);
        break;
      case "K":
        this.pending.longLink = longName(record);
        break;
      case "x":
        this.pending.pax = paxRecords(record);
        break;
      case "g":
        for (const key of paxRecords(record).keys()) {
          if (GLOBAL_REFUSED.has(key)) refused(`a pax global header sets ${key}, which would apply to every member`);
        }
        break;
    }
  }
}

function refused(message: string): never {
  throw new ArchiveProblem("refused", message);
}

function damaged(message: string): never {
  throw new ArchiveProblem("damaged", message);
}

function padded(size: number): number {
  return Math.ceil(size / BLOCK) * BLOCK;
}

function checksum(block: Buffer): number {
  let sum = 8 * 32;
  for (let i = 0; i < 148; i++) sum += block[i]!;
  for (let i = 156; i < BLOCK; i++) sum += block[i]!;
  return sum;
}

/** A NUL-terminated field: everything after the first NUL must be NUL too (else a reader that stops there sees another name). */
function textField(block: Buffer, at: number, length: number, what: string): void {
  const end = at + length;
  let i = block.indexOf(0, at);
  if (i === -1 || i >= end) return;
  for (; i < end; i++) if (block[i] !== 0) refused(`a tar header's ${what} has a NUL inside it`);
}

/** A numeric field: octal digits between optional spaces/NULs, or GNU base-256 (0x80 / 0xff first). */
function numberField(block: Buffer, at: number, length: number, what: string): number {
  const first = block[at]!;
  if (first === 0x80 || first === 0xff) {
    let value = 0;
    for (let i = at + 1; i < at + length; i++) value = value * 256 + (first === 0x80 ? block[i]! : 0xff - block[i]!);
    if (!Number.isSafeInteger(value)) refused(`a tar header's ${what} is too large`);
    return first === 0x80 ? value : -value - 1;
  }
  return octal(block, at, length, what);
}

function octal(block: Buffer, at: number, length: number, what: string): number {
  const end = at + length;
  let i = at;
  while (i < end && block[i] === 0x20) i++;
  let value = 0;
  let digits = 0;
  for (; i < end && block[i]! >= 0x30 && block[i]! <= 0x37; i++, digits++) value = value * 8 + (block[i]! - 0x30);
  for (; i < end; i++) if (block[i] !== 0 && block[i] !== 0x20) refused(`a tar header's ${what} is not an octal number`);
  if (digits === 0 && block[at] !== 0 && block[at] !== 0x20) refused(`a tar header's ${what} is not an octal number`);
  return value;
}

function ustarName(block: Buffer, ustar: boolean): string {
  const field = (at: number, length: number) => {
    const nul = block.indexOf(0, at);
    return block.toString("latin1", at, nul === -1 || nul > at + length ? at + length : nul);
  };
  const name = field(0, 100);
  return ustar && block[345] !== 0 ? `${field(345, 155)}/${name}` : name;
}

/** A GNU long name or link: trailing NULs allowed, none inside. */
function longName(record: Buffer): Buffer {
  let end = record.length;
  while (end > 0 && record[end - 1] === 0) end--;
  const name = record.subarray(0, end);
  if (name.includes(0)) refused("a GNU long name has a NUL inside it");
  return name;
}

/** Pax extended-header records ("LEN key=value\n" each, nothing else), with their numbers checked. */
function paxRecords(record: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let offset = 0;
  while (offset < record.length) {
    const space = record.indexOf(0x20, offset);
    const lengthText = space === -1 ? "" : record.toString("latin1", offset, space);
    if (!/^[1-9][0-9]{0,7}$/.test(lengthText)) refused("a pax header has a malformed record length");
    const length = Number(lengthText);
    const end = offset + length;
    if (end > record.length || record[end - 1] !== 0x0a) refused("a pax header record does not end where its length says");
    const body = record.subarray(space + 1, end - 1);
    const equals = body.indexOf(0x3d);
    if (equals <= 0) refused("a pax header record has no key");
    const key = body.toString("utf8", 0, equals);
    const valueBytes = body.subarray(equals + 1);
    if (records.has(key)) refused(`a pax header sets ${key} twice`);
    if (key.startsWith("GNU.sparse")) refused("sparse files (GNU.sparse pax records) are not supported");
    if ((key === "path" || key === "linkpath") && valueBytes.includes(0)) refused(`the pax ${key} has a NUL inside it`);
    const value = valueBytes.toString("utf8");
    if (PAX_INTEGERS.has(key) && !(/^[0-9]{1,16}$/.test(value) && Number.isSafeInteger(Number(value)))) refused(`the pax ${key} ${JSON.stringify(value.slice(0, 40))} is not a decimal integer`);
    if (PAX_TIMES.has(key) && !/^-?[0-9]{1,16}(\.[0-9]{1,9})?$/.test(value)) refused(`the pax ${key} ${JSON.stringify(value.slice(0, 40))} is not a decimal time`);
    records.set(key, value);
    offset = end;
  }
  return records;
}

/** Wraps an ArchiveProblem into the FileToolsError its kind calls for. */
export function problemError(problem: ArchiveProblem, damagedReason: "UNSAFE_ARCHIVE" | "DATA_LOSS"): FileToolsError {
  return new FileToolsError(problem.kind === "damaged" ? damagedReason : "UNSAFE_ARCHIVE", problem.message);
}
