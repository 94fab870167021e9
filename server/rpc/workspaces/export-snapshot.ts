import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { fail } from "../../errors.js";
import type { ExportStream } from "../../snapshots/snapshots.js";
import type { Deps, WorkspacesHandler } from "../types.js";

export function exportSnapshotHandler(deps: Deps): WorkspacesHandler<"exportSnapshot"> {
  return async function* (request, ctx) {
    const include = request.include.filter((glob) => glob !== "");
    if (request.presign) {
      if (request.live || include.length > 0) fail("INVALID_ARGUMENT", "presign exports a stored snapshot as it is: not with live or include");
      const manifest = await deps.snapshots.find(request.workspace, request.snapshotId, ctx.signal);
      const { url, expiresAt, size, sha256 } = await deps.snapshots.presign(manifest, request.presignSeconds ?? 0, ctx.signal);
      const header = { size: BigInt(size), sha256, fileCount: BigInt(manifest.fileCount), url, urlExpiresAt: timestampFromDate(expiresAt) };
      yield { event: { case: "header", value: header } };
      return;
    }
    let stream: ExportStream;
    if (request.live) {
      stream = await deps.snapshots.exportFiltered({ workspace: await deps.workspaces.get(request.workspace) }, include, ctx.signal);
    } else {
      const manifest = await deps.snapshots.find(request.workspace, request.snapshotId, ctx.signal);
      stream = include.length > 0 ? await deps.snapshots.exportFiltered({ manifest }, include, ctx.signal) : await deps.snapshots.exportStored(manifest, ctx.signal);
    }
    try {
      yield { event: { case: "header", value: { size: BigInt(stream.size), sha256: stream.sha256, fileCount: BigInt(stream.fileCount) } } };
      for await (const data of stream.chunks) yield { event: { case: "chunk", value: { data } } };
    } finally {
      // Cancelled at any yield (even the header's): the scratch file and the store's download go.
      await stream.release();
    }
  };
}
