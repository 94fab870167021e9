import { Newline, WriteMode } from "@filetools/proto/filetools/v1/files_pb.js";
import { fail } from "../../errors.js";
import type { NewlineMode } from "../../text/newline.js";
import { writeFile } from "../../tools/write.js";
import { writeMode } from "../convert.js";
import type { Deps, FilesHandler } from "../types.js";
import { recorderOf } from "../recorder.js";

const NEWLINE_MODES: Record<Newline, NewlineMode> = {
  [Newline.UNSPECIFIED]: "preserve",
  [Newline.PRESERVE]: "preserve",
  [Newline.LF]: "lf",
  [Newline.CRLF]: "crlf",
};

export function writeHandler(deps: Deps): FilesHandler<"write"> {
  return async (request, ctx) => {
    const workspace = await deps.workspaces.get(request.workspace);
    const { body } = request;
    if (body.case === undefined) fail("INVALID_ARGUMENT", "set content (text) or data (bytes)");
    const newline = NEWLINE_MODES[request.newline] ?? fail("INVALID_ARGUMENT", `unsupported newline mode ${request.newline}`);
    const result = await writeFile(workspace, {
      path: request.path,
      body: body.case === "content" ? { text: body.value } : { bytes: body.value },
      encoding: request.encoding,
      createDirs: request.createDirs ?? true,
      mode: request.mode === WriteMode.APPEND ? "append" : writeMode(request.mode),
      newline,
      ifVersion: request.ifVersion || undefined,
    }, await recorderOf(deps, ctx), ctx.signal, await deps.quotas.gate(workspace, ctx.tokenQuota()));
    ctx.committed();
    return { path: result.entry.path, size: result.entry.size, created: result.created, sha256: result.sha256, version: result.entry.version };
  };
}
