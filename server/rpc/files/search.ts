import type { MessageInitShape } from "@bufbuild/protobuf";
import { OutputMode, SearchOrder, type SearchResponseSchema } from "@filetools/proto/filetools/v1/files_pb.js";
import { fail } from "../../errors.js";
import { EncodedMessage } from "../../grpc/index.js";
import { matchesResponse } from "../../search/match-wire.js";
import type { SearchPool } from "../../search/pool.js";
import { search, searchBudgetMs, type ResultOrder, type SearchEvent } from "../../search/search.js";
import type { OutputMode as ScanMode } from "../../search/scan.js";
import type { Deps, FilesHandler } from "../types.js";

const MODES: Record<OutputMode, ScanMode> = {
  [OutputMode.UNSPECIFIED]: "content",
  [OutputMode.CONTENT]: "content",
  [OutputMode.FILES_WITH_MATCHES]: "files",
  [OutputMode.COUNT]: "count",
};

const ORDERS: Record<SearchOrder, ResultOrder> = {
  [SearchOrder.UNSPECIFIED]: "path",
  [SearchOrder.PATH]: "path",
  [SearchOrder.FOUND]: "found",
};

/** A `matches` message holds at most this many matches… */
const BATCH_MATCHES = 1000;
/** …and about this many bytes (a match's path, line and context, encoded), unless one match is larger. */
const BATCH_BYTES = 64 << 10;

type Response = MessageInitShape<typeof SearchResponseSchema>;

export function searchHandler(deps: Deps, pool: SearchPool): FilesHandler<"search"> {
  return async function* (request, ctx) {
    const workspace = await deps.workspaces.get(request.workspace);
    // An order this daemon does not know (a newer client's) is refused rather than served in another.
    const order = ORDERS[request.order] ?? fail("INVALID_ARGUMENT", `order ${request.order} is not one this daemon knows: SEARCH_ORDER_PATH or SEARCH_ORDER_FOUND`);
    const results = search(
      workspace,
      pool,
      {
        path: request.path,
        pattern: request.pattern,
        fixedStrings: request.fixedStrings,
        caseInsensitive: request.caseInsensitive,
        include: request.include,
        exclude: request.exclude,
        contextBefore: request.contextBefore,
        contextAfter: request.contextAfter,
        maxResults: request.maxResults,
        maxFileSize: request.maxFileSize,
        respectGitignore: request.respectGitignore,
        mode: MODES[request.outputMode] ?? "content",
        order,
      },
      ctx.signal,
      searchBudgetMs(ctx.deadline),
    );
    try {
      yield* respond();
    } finally {
      // The client went away or the call failed: stop the search (closes its files, frees its workers).
      await results.return(undefined as never);
    }
    async function* respond(): AsyncGenerator<Response | EncodedMessage> {
      for (;;) {
        const next = await results.next();
        if (next.done) {
          const s = next.value;
          yield {
            event: {
              case: "summary",
              value: {
                filesSearched: BigInt(s.filesSearched),
                filesMatched: BigInt(s.filesMatched),
                matches: BigInt(s.matches),
                binarySkipped: BigInt(s.binarySkipped),
                tooLargeSkipped: BigInt(s.tooLargeSkipped),
                bytesSearched: BigInt(s.bytesSearched),
                truncated: s.truncated,
                timedOut: s.timedOut,
              },
            },
          };
          return;
        }
        yield* request.batchMatches ? batched(next.value) : single(next.value);
      }
    }
  };
}

/** A file or count result, one per message (the other modes are not batched). */
function fileResult(r: Exclude<SearchEvent, { kind: "matches" }>): Response {
  if (r.kind === "file") return { event: { case: "file", value: { path: r.path } } };
  return { event: { case: "count", value: { path: r.path, count: BigInt(r.count) } } };
}

/** One `match` message per match: each encoded match is such a message already (match-wire.ts). */
function* single(events: SearchEvent[]): Generator<Response | EncodedMessage> {
  for (const r of events) {
    if (r.kind !== "matches") {
      yield fileResult(r);
      continue;
    }
    let start = 0;
    for (const end of r.matches.ends) {
      yield new EncodedMessage(r.matches.bytes.subarray(start, end));
      start = end;
    }
  }
}

/** What one finished task found, as `matches` messages of at most BATCH_MATCHES matches and about BATCH_BYTES. */
function* batched(events: SearchEvent[]): Generator<Response | EncodedMessage> {
  let pieces: Uint8Array[] = [];
  let matches = 0;
  let bytes = 0;
  const flush = () => {
    const message = new EncodedMessage(matchesResponse(pieces));
    pieces = [];
    matches = 0;
    bytes = 0;
    return message;
  };
  for (const r of events) {
    if (r.kind !== "matches") {
      yield fileResult(r);
      continue;
    }
    const encoded = r.matches.bytes;
    let start = 0; // of the part of `encoded` not yet in `pieces`
    let previous = 0; // where the match before this one ends
    for (const end of r.matches.ends) {
      if (matches > 0 && (matches === BATCH_MATCHES || bytes + end - previous > BATCH_BYTES)) {
        if (previous > start) pieces.push(encoded.subarray(start, previous));
        start = previous;
        yield flush();
      }
      matches++;
      bytes += end - previous;
      previous = end;
    }
    pieces.push(encoded.subarray(start));
  }
  if (matches > 0) yield flush();
}
