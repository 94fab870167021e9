// Matches leave a search worker already encoded, as the wire bytes of the
// SearchMatch messages the daemon sends, so the main thread never holds a
// match as objects: for the first 10,000 lines of a common word, turning
// cloned match objects into messages and encoding them took the main thread
// ~45 ms of a ~250 ms search and most of its ~90 ms of garbage collection
// (--cpu-prof, 20 searches). The main thread only cuts the bytes at a match
// boundary (max_results) and frames them (server/rpc/files/search.ts).
//
// Each match is framed as field 1, length-delimited: that is a whole
// SearchResponse carrying it as `match`, and one element of a
// SearchMatches's `matches`, so the same bytes serve both forms.
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { SearchMatchSchema, SearchMatchesSchema, SearchResponseSchema } from "@filetools/proto/filetools/v1/files_pb.js";
import type { LineMatch } from "./scan.js";

const MATCH_FIELD = SearchResponseSchema.field.match!.number;
if (SearchMatchesSchema.field.matches!.number !== MATCH_FIELD) {
  throw new Error("SearchResponse.match and SearchMatches.matches must share a field number (match-wire.ts)");
}

/** One-byte tags (field number < 16, wire type) of the fields encodeMatches writes. */
const TAGS = (() => {
  const f = SearchMatchSchema.field as Required<typeof SearchMatchSchema.field>;
  const tag = (number: number, type: WireType) => {
    if (number >= 16) throw new Error(`field ${number} needs a two-byte tag (match-wire.ts)`);
    return (number << 3) | type;
  };
  const LEN = WireType.LengthDelimited;
  return {
    match: tag(MATCH_FIELD, LEN),
    path: tag(f.path.number, LEN),
    lineNumber: tag(f.lineNumber.number, WireType.Varint),
    column: tag(f.column.number, WireType.Varint),
    line: tag(f.line.number, LEN),
    before: tag(f.before.number, LEN),
    after: tag(f.after.number, LEN),
    lineCut: tag(f.lineCut.number, WireType.Varint),
  };
})();

/** A file's matches, encoded: `ends[i]` is where match i ends in `bytes`. */
export interface EncodedMatches {
  bytes: Uint8Array;
  ends: number[];
}

/** `matches` of the file shown as `path`, each a framed SearchMatch. */
export function encodeMatches(path: string, matches: readonly LineMatch[]): EncodedMatches {
  // Written by hand into one buffer (the tags from the schema, checked above): BinaryWriter's
  // chunks and copies, then create() + toBinary() before it, were most of a worker's time
  // for the first 10,000 lines of a common word.
  const pathBytes = Buffer.byteLength(path);
  // The UTF-8 length of every line and context line, in the order they are written.
  const lengths: number[] = [];
  const measured = (text: string) => {
    const length = Buffer.byteLength(text);
    lengths.push(length);
    return field(length);
  };
  const sizes = matches.map((m) => {
    let size = field(pathBytes) + 1 + varintLength(m.line) + 1 + varintLength(m.column) + measured(m.text);
    for (const line of m.before) size += measured(line);
    for (const line of m.after) size += measured(line);
    return m.cut ? size + 2 : size;
  });
  // Not from the shared pool: a view of it would clone its whole 8 KiB slab to the main thread.
  const bytes = Buffer.allocUnsafeSlow(sizes.reduce((n, size) => n + field(size), 0));
  const ends: number[] = [];
  let at = 0;
  let measuredNext = 0;
  const string = (tag: number, text: string, length = lengths[measuredNext++]!) => {
    bytes[at++] = tag;
    at = writeVarint(bytes, at, length);
    at += bytes.write(text, at, "utf8");
  };
  matches.forEach((m, i) => {
    bytes[at++] = TAGS.match;
    at = writeVarint(bytes, at, sizes[i]!);
    string(TAGS.path, path, pathBytes);
    bytes[at++] = TAGS.lineNumber;
    at = writeVarint(bytes, at, m.line);
    bytes[at++] = TAGS.column;
    at = writeVarint(bytes, at, m.column);
    string(TAGS.line, m.text);
    for (const line of m.before) string(TAGS.before, line);
    for (const line of m.after) string(TAGS.after, line);
    if (m.cut) {
      bytes[at++] = TAGS.lineCut;
      bytes[at++] = 1;
    }
    ends.push(at);
  });
  return { bytes, ends };
}

/** Bytes of a length-delimited field (one-byte tag) whose content is `length` bytes. */
function field(length: number): number {
  return 1 + varintLength(length) + length;
}

function varintLength(value: number): number {
  let n = 1;
  for (; value >= 0x80; n++) value = Math.floor(value / 0x80);
  return n;
}

function writeVarint(bytes: Buffer, at: number, value: number): number {
  for (; value >= 0x80; value = Math.floor(value / 0x80)) bytes[at++] = (value % 0x80) | 0x80;
  bytes[at++] = value;
  return at;
}

/** SearchResponse{matches: SearchMatches} around framed matches (consecutive pieces of EncodedMatches.bytes). */
export function matchesResponse(pieces: readonly Uint8Array[]): Uint8Array {
  const writer = new BinaryWriter().tag(SearchResponseSchema.field.matches!.number, WireType.LengthDelimited).fork();
  for (const piece of pieces) writer.raw(piece);
  return writer.join().finish();
}
