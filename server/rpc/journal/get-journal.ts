import { timestampDate } from "@bufbuild/protobuf/wkt";
import { fail } from "../../errors.js";
import type { Deps, JournalHandler } from "../types.js";
import { entryMessage, recordMatcher } from "./journal-convert.js";

/** Entries per message and per read. */
const BATCH = 500;

export function getJournalHandler(deps: Deps): JournalHandler<"getJournal"> {
  return async function* (request, ctx) {
    await deps.workspaces.get(request.workspace);
    const matches = recordMatcher(request.globs);
    const since = request.since ? timestampDate(request.since).getTime() : -Infinity;
    const until = request.until ? timestampDate(request.until).getTime() : Infinity;
    if (since > until) fail("INVALID_ARGUMENT", "since is after until");
    const { oldest, last } = await deps.journal.bounds(request.workspace);
    const bounds = { oldestCursor: BigInt(oldest), lastCursor: BigInt(last) };
    let sent = false;
    for (let at = Number(request.afterCursor); at < last; ) {
      ctx.signal.throwIfAborted();
      const page = (await deps.journal.read(request.workspace, at, BATCH)).filter((record) => record.seq <= last);
      if (page.length === 0) break;
      at = page[page.length - 1]!.seq;
      const chosen = page.filter((record) => {
        const time = Date.parse(record.time);
        return time >= since && time < until && (request.runId === "" || record.run === request.runId) && matches(record);
      });
      if (chosen.length === 0) continue;
      sent = true;
      yield { entries: chosen.map(entryMessage), ...bounds };
    }
    if (!sent) yield { entries: [], ...bounds };
  };
}
