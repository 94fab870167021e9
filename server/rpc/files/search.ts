import type { MessageInitShape } from "@bufbuild/protobuf";
import { OutputMode, type SearchMatchSchema, type SearchResponseSchema } from "@filetools/proto/filetools/v1/files_pb.js";
import type { SearchPool } from "../../search/pool.js";
import { search, searchBudgetMs, type SearchEvent } from "../../search/search.js";
import type { OutputMode as ScanMode } from "../../search/scan.js";
import type { Deps, FilesHandler } from "../types.js";

const MODES: Record<OutputMode, ScanMode> = {
  [OutputMode.UNSPECIFIED]: "content",
  [OutputMode.CONTENT]: "content",
  [OutputMode.FILES_WITH_MATCHES]: "files",
  [OutputMode.COUNT]: "count",
};

/** A `matches` message holds at most this many matches… */
const BATCH_MATCHES = 1000;
/** …and about this much text (UTF-16 units, a match's path, line and context), unless one match is larger. */
const BATCH_CHARS = 64 << 10;

type Response = MessageInitShape<typeof SearchResponseSchema>;
type Match = MessageInitShape<typeof SearchMatchSchema>;

export function searchHandler(deps: Deps, pool: SearchPool): FilesHandler<"search"> {
  return async function* (request, ctx) {
    const workspace = await deps.workspaces.get(request.workspace);
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
    async function* respond(): AsyncGenerator<Response> {
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
        yield* request.batchMatches ? batched(next.value) : next.value.map(single);
      }
    }
  };
}

function single(r: SearchEvent): Response {
  if (r.kind === "match") return { event: { case: "match", value: matchOf(r) } };
  if (r.kind === "file") return { event: { case: "file", value: { path: r.path } } };
  return { event: { case: "count", value: { path: r.path, count: BigInt(r.count) } } };
}

/** What one finished task found, as `matches` messages (content mode; the other modes' results go one per message). */
function* batched(events: SearchEvent[]): Generator<Response> {
  let matches: Match[] = [];
  let chars = 0;
  for (const r of events) {
    if (r.kind !== "match") {
      yield single(r);
      continue;
    }
    const m = r.match;
    const size = r.path.length + m.text.length + m.before.reduce((n, l) => n + l.length, 0) + m.after.reduce((n, l) => n + l.length, 0);
    if (matches.length > 0 && (matches.length === BATCH_MATCHES || chars + size > BATCH_CHARS)) {
      yield { event: { case: "matches", value: { matches } } };
      matches = [];
      chars = 0;
    }
    matches.push(matchOf(r));
    chars += size;
  }
  if (matches.length > 0) yield { event: { case: "matches", value: { matches } } };
}

function matchOf(r: Extract<SearchEvent, { kind: "match" }>): Match {
  const m = r.match;
  return { path: r.path, lineNumber: BigInt(m.line), column: m.column, line: m.text, before: m.before, after: m.after, lineCut: m.cut };
}
