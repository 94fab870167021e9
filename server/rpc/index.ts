// Wires one handler per RPC to the domain: the workspace registry and the tools.
import type { Files } from "../../clients/ts/src/gen/filetools/v1/files_pb.js";
import type { Workspaces } from "../../clients/ts/src/gen/filetools/v1/workspaces_pb.js";
import type { DaemonConfig } from "../config.js";
import type { ServiceHandlers } from "../grpc/handlers.js";
import { WorkspaceRegistry } from "../workspace/registry.js";
import type { Deps } from "./types.js";
import { LineIndex } from "../lineindex/line-index.js";
import { deleteHandler } from "./files/delete.js";
import { downloadHandler } from "./files/download.js";
import { editHandler } from "./files/edit.js";
import { listHandler } from "./files/list.js";
import { makeDirHandler } from "./files/make-dir.js";
import { moveHandler } from "./files/move.js";
import { readHandler } from "./files/read.js";
import { statHandler } from "./files/stat.js";
import { uploadHandler } from "./files/upload.js";
import { writeHandler } from "./files/write.js";
import { createWorkspaceHandler } from "./workspaces/create-workspace.js";
import { deleteWorkspaceHandler } from "./workspaces/delete-workspace.js";
import { getWorkspaceHandler } from "./workspaces/get-workspace.js";
import { listWorkspacesHandler } from "./workspaces/list-workspaces.js";

export interface Handlers {
  files: ServiceHandlers<typeof Files>;
  workspaces: ServiceHandlers<typeof Workspaces>;
  close(): Promise<void>;
}

export async function createHandlers(config: DaemonConfig): Promise<Handlers> {
  const workspaces = await WorkspaceRegistry.start(config.dataDir, new Map(config.binds.map((bind) => [bind.name, bind.dir])));
  await workspaces.sweepTempFiles();
  const deps: Deps = { workspaces, maxReadBytes: config.maxReadBytes, lineIndex: new LineIndex() };
  return {
    // Search and the run and snapshot RPCs have their own issues; until then they answer UNIMPLEMENTED.
    files: {
      read: readHandler(deps),
      write: writeHandler(deps),
      edit: editHandler(deps),
      delete: deleteHandler(deps),
      move: moveHandler(deps),
      makeDir: makeDirHandler(deps),
      stat: statHandler(deps),
      list: listHandler(deps),
      upload: uploadHandler(deps),
      download: downloadHandler(deps),
    },
    workspaces: {
      createWorkspace: createWorkspaceHandler(deps),
      getWorkspace: getWorkspaceHandler(deps),
      listWorkspaces: listWorkspacesHandler(deps),
      deleteWorkspace: deleteWorkspaceHandler(deps),
    },
    close: () => workspaces.close(),
  };
}
