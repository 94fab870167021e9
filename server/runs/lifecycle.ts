// Starting a run (creating and restoring its workspace as asked) and the
// snapshot of every active run at shutdown: the run rules that span the run
// manager, the workspaces and the snapshots.
import { FileToolsError } from "../errors.js";
import type { Snapshots } from "../snapshots/snapshots.js";
import type { WorkspaceRegistry } from "../workspace/registry.js";
import type { Workspace } from "../workspace/workspace.js";
import type { RunInfo, RunManager } from "./runs.js";

export interface RunServices {
  workspaces: WorkspaceRegistry;
  runs: RunManager;
  snapshots: Snapshots;
}

/**
 * Starts a run on `workspaceId` (created if missing). `restore` is "LATEST"
 * (or ""): the newest snapshot, only when the workspace is empty; "NONE"; or
 * a snapshot id.
 */
export function startRun(services: RunServices, workspaceId: string, restore: string, labels: Record<string, string>, signal: AbortSignal): Promise<RunInfo> {
  const { runs, snapshots } = services;
  return runs.start(workspaceId, labels, async () => {
    const workspace = await getOrCreate(services.workspaces, workspaceId);
    if (restore === "NONE") return { restoredFrom: "" };
    if (restore === "" || restore === "LATEST") {
      if (!(await isEmpty(workspace))) return { restoredFrom: "" };
      const [newest] = await snapshots.list(workspaceId, signal);
      if (!newest) return { restoredFrom: "" };
      await snapshots.restore(workspaceId, newest, signal);
      return { restoredFrom: newest.id };
    }
    const manifest = await snapshots.find(workspaceId, restore, signal);
    await snapshots.restore(workspaceId, manifest, signal);
    return { restoredFrom: manifest.id };
  });
}

/** Snapshots every active run (they stay active: the next daemon resumes them). Returns the failures. */
export async function snapshotActiveRuns(services: RunServices): Promise<Array<{ workspace: string; error: unknown }>> {
  const failures: Array<{ workspace: string; error: unknown }> = [];
  for (const run of services.runs.activeRuns()) {
    try {
      const workspace = await services.workspaces.get(run.workspace);
      const changeSet = await services.runs.changes(run.id);
      await services.snapshots.create(workspace, { runId: run.id, labels: { ...run.labels, "filetools.shutdown": "true" }, changeSet });
    } catch (error) {
      failures.push({ workspace: run.workspace, error });
    }
  }
  return failures;
}

async function getOrCreate(workspaces: WorkspaceRegistry, id: string): Promise<Workspace> {
  try {
    return await workspaces.get(id);
  } catch (error) {
    if (!(error instanceof FileToolsError && error.reason === "WORKSPACE_NOT_FOUND")) throw error;
  }
  try {
    return await workspaces.create(id);
  } catch (error) {
    if (error instanceof FileToolsError && error.reason === "ALREADY_EXISTS") return workspaces.get(id);
    throw error;
  }
}

async function isEmpty(workspace: Workspace): Promise<boolean> {
  for await (const _ of workspace.walk([], { recursive: false, maxDepth: 1, includeHidden: true, respectGitignore: false })) return false;
  return true;
}
