import { FileToolsError } from "../../errors.js";
import type { Workspace } from "../../workspace/workspace.js";
import { runMessage } from "./snapshot-convert.js";
import type { Deps, WorkspacesHandler } from "../types.js";

export function startRunHandler(deps: Deps): WorkspacesHandler<"startRun"> {
  return async (request, ctx) => {
    const id = request.workspace;
    const restore = request.restore === "" ? "LATEST" : request.restore;
    const run = await deps.runs.start(id, request.labels, async () => {
      const workspace = await getOrCreate(deps, id);
      if (restore === "NONE") return { restoredFrom: "" };
      if (restore === "LATEST") {
        if (!(await isEmpty(workspace))) return { restoredFrom: "" };
        const [newest] = await deps.snapshots.list(id, ctx.signal);
        if (!newest) return { restoredFrom: "" };
        await deps.snapshots.restore(id, newest, ctx.signal);
        return { restoredFrom: newest.id };
      }
      const manifest = await deps.snapshots.find(id, restore, ctx.signal);
      await deps.snapshots.restore(id, manifest, ctx.signal);
      return { restoredFrom: manifest.id };
    });
    return { run: runMessage(run) };
  };
}

async function getOrCreate(deps: Deps, id: string): Promise<Workspace> {
  try {
    return await deps.workspaces.get(id);
  } catch (error) {
    if (!(error instanceof FileToolsError && error.reason === "WORKSPACE_NOT_FOUND")) throw error;
  }
  try {
    return await deps.workspaces.create(id);
  } catch (error) {
    if (error instanceof FileToolsError && error.reason === "ALREADY_EXISTS") return deps.workspaces.get(id);
    throw error;
  }
}

async function isEmpty(workspace: Workspace): Promise<boolean> {
  for await (const _ of workspace.walk([], { recursive: false, maxDepth: 1, includeHidden: true, respectGitignore: false })) return false;
  return true;
}
