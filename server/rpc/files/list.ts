import type { MessageInitShape } from "@bufbuild/protobuf";
import type { FileInfoSchema } from "@filetools/proto/filetools/v1/common_pb.js";
import { listEntries } from "../../tools/list.js";
import { fileInfo } from "../convert.js";
import { readSource } from "../read-source.js";
import type { Deps, FilesHandler } from "../types.js";

/** Entries per message: per-message cost dominates in grpc-js, so batch. */
const BATCH_SIZE = 500;

export function listHandler(deps: Deps): FilesHandler<"list"> {
  return async function* (request, ctx) {
    const source = await readSource(deps, request, ctx.signal);
    const entries = listEntries(
      source,
      request.path,
      {
        pattern: request.pattern,
        recursive: request.recursive,
        maxDepth: request.maxDepth,
        includeHidden: request.includeHidden,
        respectGitignore: request.respectGitignore,
        maxEntries: request.maxEntries,
      },
      ctx.signal,
    );
    let batch: MessageInitShape<typeof FileInfoSchema>[] = [];
    try {
      for (;;) {
        const next = await entries.next();
        if (next.done) {
          if (batch.length > 0) yield { event: { case: "entries", value: { entries: batch } } };
          yield { event: { case: "summary", value: { total: BigInt(next.value.total), truncated: next.value.truncated } } };
          return;
        }
        batch.push(fileInfo(next.value));
        if (batch.length === BATCH_SIZE) {
          yield { event: { case: "entries", value: { entries: batch } } };
          batch = [];
        }
      }
    } finally {
      // Cancelled at a yield: the walk's open directories close.
      await entries.return(undefined as never);
    }
  };
}
