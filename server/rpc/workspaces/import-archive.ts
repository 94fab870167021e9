import { fail } from "../../errors.js";
import { parsePath } from "../../workspace/paths.js";
import type { Deps, WorkspacesHandler } from "../types.js";

export function importArchiveHandler(deps: Deps): WorkspacesHandler<"importArchive"> {
  return async (requests, ctx) => {
    const stream = requests[Symbol.asyncIterator]();
    const first = await stream.next();
    if (first.done || first.value.event.case !== "header") fail("INVALID_ARGUMENT", "an import starts with a header message");
    const header = first.value.event.value;
    ctx.setWorkspace(header.workspace);
    const workspace = await deps.workspaces.get(header.workspace);
    const parts = parsePath(header.path);
    async function* chunks(): AsyncGenerator<Uint8Array> {
      for (let next = await stream.next(); !next.done; next = await stream.next()) {
        if (next.value.event.case !== "chunk") fail("INVALID_ARGUMENT", "an import has one header, then chunks");
        yield next.value.event.value.data;
      }
    }
    const result = await deps.snapshots.importArchive(workspace, parts, chunks());
    return { fileCount: BigInt(result.fileCount), sizeBytes: BigInt(result.sizeBytes) };
  };
}
