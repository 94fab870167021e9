import { fail } from "../../errors.js";
import { uploadFile } from "../../tools/transfer.js";
import { writeMode } from "../convert.js";
import type { Deps, FilesHandler } from "../types.js";

export function uploadHandler(deps: Deps): FilesHandler<"upload"> {
  return async (requests, ctx) => {
    const stream = requests[Symbol.asyncIterator]();
    const first = await stream.next();
    if (first.done || first.value.event.case !== "header") fail("INVALID_ARGUMENT", "an upload starts with a header message");
    const header = first.value.event.value;
    ctx.setWorkspace(header.workspace);
    const workspace = await deps.workspaces.get(header.workspace);
    async function* chunks(): AsyncGenerator<Uint8Array> {
      for (let next = await stream.next(); !next.done; next = await stream.next()) {
        if (next.value.event.case !== "chunk") fail("INVALID_ARGUMENT", "an upload has one header, then chunks");
        yield next.value.event.value.data;
      }
    }
    const target = {
      path: header.path,
      mode: writeMode(header.mode),
      createDirs: header.createDirs ?? true,
      ifVersion: header.ifVersion || undefined,
      sha256: header.sha256,
    };
    const result = await uploadFile(workspace, target, chunks(), deps.runs);
    return { path: result.entry.path, size: result.entry.size, created: result.created, sha256: result.sha256, version: result.entry.version };
  };
}
