import type { MessageInitShape } from "@bufbuild/protobuf";
import { OutputMode, type SearchResponseSchema } from "@filetools/proto/filetools/v1/files_pb.js";
import type { SearchPool } from "../../search/pool.js";
import { search, searchBudgetMs } from "../../search/search.js";
import type { OutputMode as ScanMode } from "../../search/scan.js";
import type { Deps, FilesHandler } from "../types.js";

const MODES: Record<OutputMode, ScanMode> = {
  [OutputMode.UNSPECIFIED]: "content",
  [OutputMode.CONTENT]: "content",
  [OutputMode.FILES_WITH_MATCHES]: "files",
  [OutputMode.COUNT]: "count",
};

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
    async function* respond(): AsyncGenerator<MessageInitShape<typeof SearchResponseSchema>> {
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
        const r = next.value;
        if (r.kind === "match") {
          const m = r.match;
          yield {
            event: {
              case: "match",
              value: { path: r.path, lineNumber: BigInt(m.line), column: m.column, line: m.text, before: m.before, after: m.after, lineCut: m.cut },
            },
          };
        } else if (r.kind === "file") {
          yield { event: { case: "file", value: { path: r.path } } };
        } else {
          yield { event: { case: "count", value: { path: r.path, count: BigInt(r.count) } } };
        }
      }
    }
  };
}
