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
import { create, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { SearchMatchSchema, SearchMatchesSchema, SearchResponseSchema } from "@filetools/proto/filetools/v1/files_pb.js";
import type { LineMatch } from "./scan.js";

const MATCH_FIELD = SearchResponseSchema.field.match!.number;
if (SearchMatchesSchema.field.matches!.number !== MATCH_FIELD) {
  throw new Error("SearchResponse.match and SearchMatches.matches must share a field number (match-wire.ts)");
}

/** A file's matches, encoded: `ends[i]` is where match i ends in `bytes`. */
export interface EncodedMatches {
  bytes: Uint8Array;
  ends: number[];
}

/** `matches` of the file shown as `path`, each a framed SearchMatch. */
export function encodeMatches(path: string, matches: readonly LineMatch[]): EncodedMatches {
  const framed = matches.map((m) =>
    new BinaryWriter()
      .tag(MATCH_FIELD, WireType.LengthDelimited)
      .bytes(
        toBinary(
          SearchMatchSchema,
          create(SearchMatchSchema, { path, lineNumber: BigInt(m.line), column: m.column, line: m.text, before: m.before, after: m.after, lineCut: m.cut }),
        ),
      )
      .finish(),
  );
  const bytes = new Uint8Array(framed.reduce((n, f) => n + f.length, 0));
  const ends: number[] = [];
  let at = 0;
  for (const f of framed) {
    bytes.set(f, at);
    at += f.length;
    ends.push(at);
  }
  return { bytes, ends };
}

/** SearchResponse{matches: SearchMatches} around framed matches (consecutive pieces of EncodedMatches.bytes). */
export function matchesResponse(pieces: readonly Uint8Array[]): Uint8Array {
  const writer = new BinaryWriter().tag(SearchResponseSchema.field.matches!.number, WireType.LengthDelimited).fork();
  for (const piece of pieces) writer.raw(piece);
  return writer.join().finish();
}
