// The run rules that span the run manager, the workspaces and the snapshots:
// starting a run (creating and restoring its workspace as asked), finishing it
// with a snapshot, reading a change set, deleting a workspace, and the
// snapshot of every active run at shutdown.
import { FileToolsError, fail } from "../errors.js";
import type { Manifest, Snapshots } from "../snapshots/snapshots.js";
import type { Change } from "../tools/changes.js";
import type { WorkspaceRegistry } from "../workspace/registry.js";
import type { Workspace } from "../workspace/workspace.js";
import type { Leases } from "./leases.js";
import { summarize, type ChangeSummary, type RunInfo, type RunManager } from "./runs.js";

export interface RunServices {
  workspaces: WorkspaceRegistry;
  runs: RunManager;
  snapshots: Snapshots;
  /** Run leases on a store shared by daemons (s3://); absent on file://. */
  leases?: Leases;
}

/**
 * Starts a run on `workspaceId` (created if missing). `restore` is "LATEST"
 * (or ""): the newest snapshot, only when the workspace is empty; "NONE"; or
 * a snapshot id.
 */
export function startRun(services: RunServices, workspaceId: string, restore: string, labels: Record<string, string>, signal: AbortSignal): Promise<RunInfo> {
  const { runs, snapshots, leases } = services;
  return runs.start(workspaceId, labels, async (runId) => {
    await leases?.acquire(workspaceId, runId, signal);
    try {
      return await begin();
    } catch (error) {
      await leases?.release(workspaceId, runId);
      throw error;
    }
  });

  async function begin(): Promise<{ restoredFrom: string; base: string }> {
    const workspace = await getOrCreate(services.workspaces, workspaceId);
    // What the run's snapshot will follow: the newest published now, whatever is restored.
    const base = await snapshots.newestId(workspaceId, signal);
    if (restore === "NONE") return { restoredFrom: "", base };
    if (restore === "" || restore === "LATEST") {
      if (!(await isEmpty(workspace))) return { restoredFrom: "", base };
      const [newest] = await snapshots.list(workspaceId, signal);
      if (!newest) return { restoredFrom: "", base };
      await snapshots.restore(workspaceId, newest, signal);
      return { restoredFrom: newest.id, base };
    }
    const manifest = await snapshots.find(workspaceId, restore, signal);
    await snapshots.restore(workspaceId, manifest, signal);
    return { restoredFrom: manifest.id, base };
  }
}

/**
 * Ends the active run `runId`, snapshotting the workspace unless `snapshot` is
 * false. A failed snapshot (store down) leaves the run active: the caller can retry.
 */
export async function finishRun(
  services: RunServices,
  workspaceId: string,
  runId: string,
  options: { snapshot: boolean; labels: Record<string, string> },
  signal: AbortSignal,
): Promise<{ manifest?: Manifest; changes: ChangeSummary }> {
  const workspace = await services.workspaces.get(workspaceId);
  const run = services.runs.requireActive(workspaceId, runId);
  const changeSet = await services.runs.changes(run.id);
  const manifest = options.snapshot
    ? await services.snapshots.create(workspace, { runId: run.id, labels: { ...run.labels, ...options.labels }, changeSet, parent: run.base, beforeCommit: leaseCheck(services, run, signal) }, signal)
    : undefined;
  await services.runs.finish(run, manifest?.id ?? "");
  await services.leases?.release(workspaceId, run.id);
  return { manifest, changes: summarize(changeSet) };
}

/** A run's change set: from this daemon's records, or else from the run's snapshot manifest in the store. */
export async function changeSetOf(services: RunServices, workspaceId: string, runId: string, signal: AbortSignal): Promise<Change[]> {
  const local = await services.runs.find(runId);
  if (local && local.workspace === workspaceId) return services.runs.changes(local.id);
  const manifest = runId ? await services.snapshots.findByRun(workspaceId, runId, signal) : undefined;
  if (!manifest) fail("NOT_FOUND", `run ${runId || "(none)"} of workspace ${workspaceId} is not known here or in the store`);
  return manifest.changeSet;
}

/** Deletes a workspace; its active run ends without a snapshot, its snapshots stay unless asked. */
export async function deleteWorkspace(services: RunServices, workspaceId: string, deleteSnapshots: boolean, signal: AbortSignal): Promise<void> {
  await services.workspaces.delete(workspaceId);
  const run = services.runs.activeRun(workspaceId);
  if (run) {
    await services.runs.finish(run, "");
    await services.leases?.release(workspaceId, run.id);
  }
  if (deleteSnapshots) await services.snapshots.deleteAll(workspaceId, signal);
}

/** Snapshots every active run (they stay active: the next daemon resumes them). Returns the failures. */
export async function snapshotActiveRuns(services: RunServices): Promise<Array<{ workspace: string; error: unknown }>> {
  const failures: Array<{ workspace: string; error: unknown }> = [];
  for (const run of services.runs.activeRuns()) {
    try {
      const workspace = await services.workspaces.get(run.workspace);
      const changeSet = await services.runs.changes(run.id);
      const labels = { ...run.labels, "filetools.shutdown": "true" };
      const manifest = await services.snapshots.create(workspace, { runId: run.id, labels, changeSet, parent: run.base, beforeCommit: leaseCheck(services, run) });
      await services.runs.advanceBase(run, manifest.id);
    } catch (error) {
      failures.push({ workspace: run.workspace, error });
    }
  }
  return failures;
}

/** With leases: the run must still hold its workspace's lease to publish (checked by renewing it). */
function leaseCheck(services: RunServices, run: RunInfo, signal?: AbortSignal): (() => Promise<void>) | undefined {
  const { leases } = services;
  return leases && (() => leases.confirm(run.workspace, run.id, signal));
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
