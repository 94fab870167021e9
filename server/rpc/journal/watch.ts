import type { MessageInitShape } from "@bufbuild/protobuf";
import type { WatchResponseSchema } from "@filetools/proto/filetools/v1/journal_pb.js";
import type { WatchEvent } from "../../journal/watcher.js";
import { timestampFromDate } from "../convert.js";
import type { Deps, JournalHandler } from "../types.js";
import { entryMessage, recordMatcher } from "./journal-convert.js";

export function watchHandler(deps: Deps): JournalHandler<"watch"> {
  return async function* (request, ctx) {
    await deps.workspaces.get(request.workspace);
    const matches = recordMatcher(request.globs);
    const cursor = request.cursor === undefined ? undefined : Number(request.cursor);
    for await (const event of deps.journal.watch(request.workspace, cursor, matches, ctx.signal)) yield watchMessage(event);
  };
}

function watchMessage(event: WatchEvent): MessageInitShape<typeof WatchResponseSchema> {
  switch (event.kind) {
    case "changes":
      return { event: { case: "changes", value: { entries: event.records.map(entryMessage) } } };
    case "live":
      return { event: { case: "live", value: { cursor: BigInt(event.cursor) } } };
    case "missed":
      return { event: { case: "missed", value: { count: BigInt(event.count), resumeCursor: BigInt(event.resume) } } };
    case "notice":
      return { event: { case: "notice", value: { message: event.message, time: timestampFromDate(event.time) } } };
  }
}
