// The run rules that span the run manager, the workspaces, their copies and
// the snapshots: starting a run from the store's newest (keeping a replaced
// copy's unpublished work), finishing it with a compare-and-swap publish,
// resuming or ending runs at start-up, abandoning a stuck run, reading a
// change set, deleting a workspace, and the snapshot of every active run at
// shutdown. The store is the truth: nothing here publishes over a run it did
// not start from, and work that cannot be published is kept as a recovered
// snapshot.
import { FileToolsError, fail } from "../errors.js";
import type { Logger } from "../log.js";
import type { LeaseMetrics } from "../metrics/metrics.js";
import type { Manifest, QuotaCheck, Snapshots, Written } from "../snapshots/snapshots.js";
import type { Change } from "../tools/changes.js";
import { listTree, type ListedTree } from "../workspace/fingerprint.js";
import type { WorkspaceRegistry } from "../workspace/registry.js";
import type { Workspace } from "../workspace/workspace.js";
import type { Copies, CopyState } from "./copies.js";
import type { LeaseInfo, Leases } from "./leases.js";
import { summarize, type ChangeSummary, type RunInfo, type RunManager } from "./runs.js";

export interface RunServices {
  workspaces: WorkspaceRegistry;
  /** Active runs and change sets; also the change recorder the mutating tools report to. */
  runs: RunManager;
  /** Snapshots in the store. */
  snapshots: Snapshots;
  /** What each workspace is a copy of. */
  copies: Copies;
  /** Run leases on a store shared by daemons (s3://); absent on file://. */
  leases?: Leases;
  /** This daemon (--node-name). */
  node: string;
  /** Per workspace, the recovery of a run ended at start-up, while it is under way. */
  recoveries: Map<string, Promise<unknown>>;
  /** Per run, its FinishRun while it is under way. */
  finishing: Map<string, Promise<{ manifest?: Manifest; changes: ChangeSummary }>>;
  metrics?: LeaseMetrics;
  logger?: Pick<Logger, "warn" | "error">;
}

/** A refused publish, as FinishRun reports it: the run ended, its work kept. */
function refusal(written: Extract<Written, { published: false }>, run: RunInfo): never {
  const kept = `its work is kept as recovered snapshot ${written.manifest.id}`;
  const metadata = { recovered_snapshot: written.manifest.id, newest_snapshot: written.newest, parent: written.manifest.parent };
  if (written.leaseLost) fail("RUN_ACTIVE", `run ${run.id} lost the lease of workspace ${run.workspace} (another run may hold it now); nothing was published, the run has ended, and ${kept}`, metadata);
  fail(
    "CONTENT_CHANGED",
    `workspace ${run.workspace} has a newer snapshot, ${written.newest}, published by another run after this run started from ${written.manifest.parent || "no snapshot"}; nothing was published (it would drop that work), the run has ended, and ${kept}. Start a new run from ${written.newest} and apply the work again`,
    metadata,
  );
}

/**
 * Starts a run on `workspaceId` (created if missing). `restore` is "LATEST"
 * (or ""): the newest published snapshot (the copy as it is when it is a
 * copy of that one); "NONE"; or a snapshot id. A copy that is replaced keeps
 * its unpublished changes as a recovered snapshot first.
 */
export function startRun(services: RunServices, workspaceId: string, restore: string, labels: Record<string, string>, signal: AbortSignal): Promise<RunInfo> {
  const { runs, snapshots, leases, copies } = services;
  return runs.start(workspaceId, labels, services.node, async (runId, startedAt) => {
    await services.recoveries.get(workspaceId);
    await leases?.acquire(workspaceId, runId, startedAt, signal);
    try {
      const begun = await begin();
      await copies.startRun(workspaceId, runId);
      return begun;
    } catch (error) {
      await leases?.release(workspaceId, runId);
      throw error;
    }
  });

  async function begin(): Promise<{ restoredFrom: string; base: string; follows: string }> {
    const workspace = await getOrCreate(services.workspaces, workspaceId);
    const newest = await snapshots.newestId(workspaceId, signal);
    const copy = await copies.state(workspace, signal);
    if (restore === "NONE") return { restoredFrom: "", base: copy.snapshot ?? "", follows: copy.snapshot ?? "" };
    const from = (manifest: Manifest) => ({ restoredFrom: manifest.id, base: manifest.id, follows: newest });
    if (restore !== "" && restore !== "LATEST") {
      const manifest = await snapshots.find(workspaceId, restore, signal);
      await keepUnpublished(services, workspace, copy, `replaced by a restore of ${manifest.id} at the start of a run`, "unpublished_changes", signal);
      await restoreCopy(services, manifest, signal, undefined, copy.tree);
      return from(manifest);
    }
    // The copy is of the newest (changed or not), or the store has nothing to start from: the copy as it is.
    if (copy.snapshot === newest || newest === "") return { restoredFrom: "", base: newest, follows: newest };
    const manifest = await snapshots.find(workspaceId, newest, signal);
    if (copy.snapshot === undefined && (await sameAsSnapshot(services, workspace, manifest, signal))) {
      await copies.record(workspaceId, newest, copy.tree.fingerprint);
      return { restoredFrom: "", base: newest, follows: newest };
    }
    await keepUnpublished(services, workspace, copy, `another run published ${newest} after this copy was made`, "unpublished_changes", signal);
    await restoreCopy(services, manifest, signal, undefined, copy.tree);
    return from(manifest);
  }
}

/**
 * Ends the active run `runId`, publishing a snapshot of the workspace unless
 * `snapshot` is false. A store that fails leaves the run active (retry); a
 * publish refused (another run published first, or the lease was lost) ends
 * the run with its work kept as a recovered snapshot, and fails.
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
  // A second FinishRun of the run (a client's retry) gets the first one's outcome, rather than publishing again.
  const finishing = services.finishing.get(run.id);
  if (finishing) {
    try {
      return await finishing;
    } catch (error) {
      // The first one failed without ending the run (cancelled, store down): this one tries again.
      if (services.runs.activeRun(workspaceId)?.id !== run.id) throw error;
    }
  }
  const finished = finishNow(services, workspace, run, options, signal);
  services.finishing.set(run.id, finished);
  try {
    return await finished;
  } finally {
    services.finishing.delete(run.id);
  }
}

async function finishNow(
  services: RunServices,
  workspace: Workspace,
  run: RunInfo,
  options: { snapshot: boolean; labels: Record<string, string> },
  signal: AbortSignal,
): Promise<{ manifest?: Manifest; changes: ChangeSummary }> {
  const workspaceId = workspace.id;
  const changeSet = await services.runs.changes(run.id);
  if (!options.snapshot) {
    await services.runs.finish(run, "");
    await services.leases?.release(workspaceId, run.id);
    return { changes: summarize(changeSet) };
  }
  const written = await publish(services, workspace, run, { ...run.labels, ...options.labels }, changeSet, signal);
  await services.runs.finish(run, written.manifest.id);
  await services.leases?.release(workspaceId, run.id);
  if (!written.published) refusal(written, run);
  return { manifest: written.manifest, changes: summarize(changeSet) };
}

/**
 * Packs the run's workspace and publishes it over the head the run started
 * from; the copy is then a copy of what was written (published or recovered),
 * as of the fingerprint the pack's walk took.
 */
async function publish(services: RunServices, workspace: Workspace, run: RunInfo, labels: Record<string, string>, changeSet: Change[], signal?: AbortSignal): Promise<Written> {
  const replaces = run.follows ?? run.base ?? (await services.snapshots.newestId(run.workspace, signal));
  const written = await services.snapshots.create(
    workspace,
    { runId: run.id, labels, changeSet, parent: run.base ?? replaces, publish: { replaces, beforeCommit: leaseCheck(services, run, signal) } },
    signal,
  );
  await services.copies.record(run.workspace, written.manifest.id, written.fingerprint);
  if (!written.published) services.metrics?.recovered(written.leaseLost ? "lease_lost" : "refused");
  return written;
}

/**
 * Keeps the copy's unpublished changes, if it has any, as a recovered
 * snapshot (parent: what the copy was of), which the copy then is a copy of.
 * Returns it, or undefined when there was nothing to keep.
 */
async function keepUnpublished(services: RunServices, workspace: Workspace, copy: CopyState, why: string, metric: string, signal?: AbortSignal): Promise<Manifest | undefined> {
  if (!copy.changed) return undefined;
  const changeSet = copy.run ? await services.runs.changes(copy.run) : [];
  const origin = copy.snapshot === undefined ? "a copy of unknown origin" : `changes to ${copy.snapshot || "an empty workspace"} never published`;
  const reason = `${origin}${copy.run ? ` (run ${copy.run})` : ""}: ${why}`;
  const written = await services.snapshots.create(workspace, { runId: copy.run, labels: { "filetools.recovered": "true" }, changeSet, parent: copy.snapshot ?? "", recoveredReason: reason }, signal);
  // The state's fingerprint, taken before the pack: a change racing it makes the copy look changed later, never unchanged.
  await services.copies.record(workspace.id, written.manifest.id, copy.tree.fingerprint);
  services.metrics?.recovered(metric);
  services.logger?.warn({ workspace: workspace.id, snapshot: written.manifest.id, run_id: copy.run, reason }, "unpublished work kept as a recovered snapshot");
  return written.manifest;
}

/** Restores `manifest` into its workspace, which is then a copy of it; `listed`: the copy as a walk just saw it (the restore plans its fetch from it). */
async function restoreCopy(services: RunServices, manifest: Manifest, signal?: AbortSignal, quota?: QuotaCheck, listed?: ListedTree): Promise<void> {
  const restored = await services.snapshots.restore(manifest.workspace, manifest, { signal, quota, listed, beforeApply: () => services.copies.replacing(manifest.workspace) });
  // Past the restore's commit point: not cancelled, or the copy would look changed.
  const fingerprint = restored.fingerprint ?? (await listTree(await services.workspaces.get(manifest.workspace))).fingerprint;
  await services.copies.record(manifest.workspace, manifest.id, fingerprint);
}

/** Whether the tree holds exactly the snapshot's files and links (hashed): a copy of unknown origin that is one. */
async function sameAsSnapshot(services: RunServices, workspace: Workspace, manifest: Manifest, signal?: AbortSignal): Promise<boolean> {
  if (!manifest.files && !manifest.contents) return false;
  const diff = await services.snapshots.diff(workspace.id, manifest.id, { live: workspace }, signal);
  for await (const _ of diff.entries) return false;
  return true;
}

/** Replaces a workspace's contents with a snapshot (RestoreSnapshot): an operator's explicit choice, so unpublished changes go. */
export async function restoreSnapshot(services: RunServices, workspaceId: string, snapshotId: string, signal: AbortSignal, quota?: QuotaCheck): Promise<Manifest> {
  const manifest = await services.snapshots.find(workspaceId, snapshotId, signal);
  await restoreCopy(services, manifest, signal, quota);
  return manifest;
}

/**
 * At start-up: a run this daemon left active is resumed only while the head
 * is still what it started from and (shared store) its lease still names it.
 * Otherwise it ends, recorded with why, and its unpublished work is kept as a
 * recovered snapshot (in the background; a StartRun on the workspace waits
 * for it).
 */
export async function resumeRuns(services: RunServices): Promise<void> {
  await Promise.all(services.runs.activeRuns().map((run) => checkResumed(services, run, 0)));
}

/** Decides whether `run` resumes (see resumeRuns); a store that cannot be read now is asked again later, the run unheld meanwhile. */
async function checkResumed(services: RunServices, run: RunInfo, attempt: number): Promise<void> {
  let why: string | undefined;
  try {
    const newest = await services.snapshots.newestId(run.workspace);
    if (run.follows === undefined) why = "it was started by an older daemon that did not record what the run started from";
    else if (newest !== run.follows) why = `another run published ${newest} while this daemon was down`;
    else if (services.leases && !(await services.leases.resume(run.workspace, run.id, run.startedAt))) why = "its lease was taken over or abandoned while this daemon was down";
  } catch (error) {
    // Unheld until the store answers: its FinishRun cannot publish without the lease, and keeps its work.
    services.logger?.warn({ workspace: run.workspace, run_id: run.id, err: error }, "run not resumed yet: the store could not be read");
    const retry = setTimeout(() => {
      if (services.runs.activeRun(run.workspace)?.id === run.id) void checkResumed(services, run, attempt + 1);
    }, Math.min(30_000, 1000 * 2 ** attempt));
    retry.unref();
    return;
  }
  if (why === undefined) return;
  await services.runs.finish(run, "", why);
  services.logger?.warn({ workspace: run.workspace, run_id: run.id, reason: why }, "run ended at start-up");
  const recovery = (async () => {
    const workspace = await services.workspaces.get(run.workspace);
    await keepUnpublished(services, workspace, await services.copies.state(workspace), `run ${run.id} ended at start-up: ${why}`, "run_ended_at_restart");
  })().catch((error: unknown) => services.logger?.error({ workspace: run.workspace, run_id: run.id, err: error }, "unpublished work of an ended run not kept yet: the next StartRun keeps it"));
  services.recoveries.set(run.workspace, recovery);
  void recovery.finally(() => {
    if (services.recoveries.get(run.workspace) === recovery) services.recoveries.delete(run.workspace);
  });
}

/**
 * Ends workspace `workspaceId`'s active run without publishing (an
 * operator's AbandonRun; `runId` "" = whichever). This daemon's run ends at
 * once, its unpublished work kept as a recovered snapshot; another daemon's
 * has its lease broken. NOT_FOUND when no such run is active.
 */
export async function abandonRun(services: RunServices, workspaceId: string, runId: string, reason: string, signal: AbortSignal): Promise<{ runId: string; recovered?: Manifest; leaseBroken: boolean }> {
  const why = `abandoned by an operator${reason ? `: ${reason}` : ""}`;
  const local = services.runs.activeRun(workspaceId);
  if (local && (runId === "" || local.id === runId)) {
    await services.runs.finish(local, "", why);
    await services.leases?.release(workspaceId, local.id);
    const workspace = await services.workspaces.get(workspaceId);
    const recovered = await keepUnpublished(services, workspace, await services.copies.state(workspace, signal), `run ${local.id} ${why}`, "abandoned", signal);
    return { runId: local.id, recovered, leaseBroken: false };
  }
  const broken = await services.leases?.abandon(workspaceId, runId, signal);
  if (broken) return { runId: broken.runId, leaseBroken: true };
  fail("NOT_FOUND", `workspace ${workspaceId} has no active run${runId ? ` ${runId}` : ""}`);
}

/** A workspace's active run (this daemon's, else a live lease of the fleet's), what the store's newest is, and what the copy is of. */
export async function describeWorkspace(services: RunServices, workspaceId: string, signal: AbortSignal): Promise<{ workspace: Workspace; active?: ActiveRunInfo; newest: string; copy: CopyState }> {
  const workspace = await services.workspaces.get(workspaceId);
  const [newest, copy, lease] = await Promise.all([
    services.snapshots.newestId(workspaceId, signal),
    services.copies.state(workspace, signal),
    services.leases?.describe(workspaceId, signal),
  ]);
  const local = services.runs.activeRun(workspaceId);
  const active = local ? localRun(local, lease) : lease?.live ? remoteRun(lease) : undefined;
  return { workspace, active, newest, copy };
}

/** The active runs: this daemon's, and the fleet's live leases (shared store). */
export async function listRuns(services: RunServices, signal: AbortSignal): Promise<ActiveRunInfo[]> {
  const leases = (await services.leases?.listLive(signal)) ?? [];
  const byWorkspace = new Map(leases.map((lease) => [lease.workspace, remoteRun(lease)]));
  for (const run of services.runs.activeRuns()) byWorkspace.set(run.workspace, localRun(run, leases.find((l) => l.workspace === run.workspace)));
  return [...byWorkspace.values()].sort((a, b) => (a.workspace < b.workspace ? -1 : a.workspace > b.workspace ? 1 : 0));
}

/** An active run as an operator sees it. */
export interface ActiveRunInfo {
  workspace: string;
  runId: string;
  node: string;
  startedAt?: string;
  leaseExpiresAt?: string;
  local: boolean;
}

function localRun(run: RunInfo, lease: LeaseInfo | undefined): ActiveRunInfo {
  const held = lease?.runId === run.id ? lease : undefined;
  return { workspace: run.workspace, runId: run.id, node: run.node ?? "", startedAt: run.startedAt, leaseExpiresAt: held?.expiresAt, local: true };
}

function remoteRun(lease: LeaseInfo): ActiveRunInfo {
  return { workspace: lease.workspace, runId: lease.runId, node: lease.holder, startedAt: lease.startedAt, leaseExpiresAt: lease.expiresAt, local: false };
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
  await services.copies.forget(workspaceId);
  const run = services.runs.activeRun(workspaceId);
  if (run) {
    await services.runs.finish(run, "");
    await services.leases?.release(workspaceId, run.id);
  }
  if (deleteSnapshots) await services.snapshots.deleteAll(workspaceId, signal);
}

/**
 * Snapshots every active run at shutdown. Published, the run stays active
 * (the next daemon resumes it) and follows its new snapshot; refused, it
 * ends, its work kept as a recovered snapshot. Returns the failures.
 */
export async function snapshotActiveRuns(services: RunServices): Promise<Array<{ workspace: string; error: unknown }>> {
  const failures: Array<{ workspace: string; error: unknown }> = [];
  for (const run of services.runs.activeRuns()) {
    try {
      const workspace = await services.workspaces.get(run.workspace);
      const changeSet = await services.runs.changes(run.id);
      const written = await publish(services, workspace, run, { ...run.labels, "filetools.shutdown": "true" }, changeSet);
      if (written.published) await services.runs.advanceBase(run, written.manifest.id);
      else {
        await services.runs.finish(run, written.manifest.id, `its shutdown snapshot could not be published: ${written.manifest.recovered}`);
        await services.leases?.release(run.workspace, run.id);
      }
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
