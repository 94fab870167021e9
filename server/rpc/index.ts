// Wires one handler per RPC to the domain: the workspace registry and the tools.
import type { Files } from "@filetools/proto/filetools/v1/files_pb.js";
import type { Workspaces } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import type { Journal as JournalService } from "@filetools/proto/filetools/v1/journal_pb.js";
import { Journal } from "../journal/journal.js";
import { OutsideChanges } from "../journal/outside.js";
import { SpaceReserve } from "../journal/reserve.js";
import { watchHandler } from "./journal/watch.js";
import { getJournalHandler } from "./journal/get-journal.js";
import path from "node:path";
import type { DaemonConfig } from "../config.js";
import type { Logger } from "../log.js";
import type { ServiceHandlers } from "../grpc/handlers.js";
import { WorkspaceRegistry } from "../workspace/registry.js";
import type { Deps } from "./types.js";
import { resumeRuns, snapshotActiveRuns } from "../runs/lifecycle.js";
import { LineIndex } from "../lineindex/line-index.js";
import { RunManager } from "../runs/runs.js";
import { openStore } from "../snapshots/open-store.js";
import { Leases } from "../runs/leases.js";
import { Copies } from "../runs/copies.js";
import { listRunsHandler } from "./workspaces/list-runs.js";
import { abandonRunHandler } from "./workspaces/abandon-run.js";
import type { DaemonMetrics } from "../metrics/metrics.js";
import { meteredStore } from "../metrics/metered-store.js";
import { tracedStore } from "../tracing/traced-store.js";
import { DEFAULT_COMPACTION, Snapshots } from "../snapshots/snapshots.js";
import { Quotas } from "../quotas/quotas.js";
import { exportSnapshotHandler } from "./workspaces/export-snapshot.js";
import { finishRunHandler } from "./workspaces/finish-run.js";
import { getChangeSetHandler } from "./workspaces/get-change-set.js";
import { importArchiveHandler } from "./workspaces/import-archive.js";
import { listSnapshotsHandler } from "./workspaces/list-snapshots.js";
import { diffSnapshotsHandler } from "./workspaces/diff-snapshots.js";
import { restoreSnapshotHandler } from "./workspaces/restore-snapshot.js";
import { startRunHandler } from "./workspaces/start-run.js";
import { deleteHandler } from "./files/delete.js";
import { downloadHandler } from "./files/download.js";
import { searchHandler } from "./files/search.js";
import { SearchPool } from "../search/pool.js";
import { closePdfPool } from "../media/pdf-pool.js";
import { editHandler } from "./files/edit.js";
import { listHandler } from "./files/list.js";
import { makeDirHandler } from "./files/make-dir.js";
import { moveHandler } from "./files/move.js";
import { readHandler } from "./files/read.js";
import { readMediaHandler } from "./files/read-media.js";
import { statHandler } from "./files/stat.js";
import { uploadHandler } from "./files/upload.js";
import { applyPatchHandler } from "./files/apply-patch.js";
import { PatchJournal } from "../patch/journal.js";
import { finishPendingPatches } from "../patch/patch.js";
import { writeHandler } from "./files/write.js";
import { createWorkspaceHandler } from "./workspaces/create-workspace.js";
import { deleteWorkspaceHandler } from "./workspaces/delete-workspace.js";
import { getWorkspaceHandler } from "./workspaces/get-workspace.js";
import { listWorkspacesHandler } from "./workspaces/list-workspaces.js";

export interface Handlers {
  files: ServiceHandlers<typeof Files>;
  workspaces: ServiceHandlers<typeof Workspaces>;
  journal: ServiceHandlers<typeof JournalService>;
  /** Snapshots every active run (they stay active); for graceful shutdown. Returns the failures. */
  snapshotActiveRuns(): Promise<Array<{ workspace: string; error: unknown }>>;

  close(): Promise<void>;
}

export async function createHandlers(config: DaemonConfig, logger?: Logger, metrics?: DaemonMetrics): Promise<Handlers> {
  const workspaces = await WorkspaceRegistry.start(config.dataDir, new Map(config.binds.map((bind) => [bind.name, bind.dir])));
  // Patches a crash left committed are finished first: the sweep would remove the staged files they name.
  const patches = new PatchJournal(path.join(config.dataDir, "patches"));
  await finishPendingPatches(patches, workspaces, logger);
  await workspaces.sweepTempFiles();
  const searchPool = await SearchPool.start(config.workers);
  // The store is bound once; one that is unusable now stops the start-up (never a silent local fallback).
  const opened = await openStore(config.store, config.dataDir, config.s3);
  await opened.check();
  const metered = metrics ? meteredStore(opened, metrics) : opened;
  const store = config.otlpEndpoint ? tracedStore(metered) : metered;
  const quotas = new Quotas(config.quota);
  const snapshots = new Snapshots(store, config.keepSnapshots, path.join(config.dataDir, "tmp"), workspaces, {
    logger,
    metrics,
    quotas,
    node: config.nodeName,
    statCacheDir: path.join(config.dataDir, "stat-cache"),
    gzipLevel: config.snapshotGzipLevel,
    compaction: { ...DEFAULT_COMPACTION, maxTarballs: config.snapshotMaxTarballs },
  });
  await snapshots.prepare();
  const runs = await RunManager.load(config.dataDir, logger);
  const copies = await Copies.load(config.dataDir, logger);
  // Leases where other daemons may share the store; on file:// the heads' compare-and-swap is the guard (README).
  const leases = store.shared ? new Leases(store, config.leaseTtlMs, config.nodeName, logger, metrics) : undefined;
  const lineIndex = new LineIndex();
  const journal = new Journal(path.join(config.dataDir, "journal"), { retention: config.journal, watchQueue: config.watchQueue, logger });
  const existing = new Set((await workspaces.list()).map((workspace) => workspace.id));
  await journal.sweep((id) => existing.has(id));
  const reserve = new SpaceReserve(path.join(config.dataDir, "journal-reserve"));
  // A disk already full is no reason not to start: changes are refused until it has room.
  await reserve.ensure().catch((error: unknown) => logger?.warn({ err: error }, "no room set aside for the journal"));
  // Bound workspaces: changes made behind the daemon's back are journaled too.
  const outside: OutsideChanges[] = [];
  for (const bind of config.binds) {
    const watching = new OutsideChanges(journal, await workspaces.get(bind.name), { mode: config.outsideWatch, scanMs: config.outsideScanMs, verifyMs: config.outsideVerifyMs, logger });
    await watching.start();
    outside.push(watching);
  }
  metrics?.sample({
    searchPool: () => searchPool.stats(),
    lineIndex: () => ({ bytes: lineIndex.usedBytes, files: lineIndex.fileCount }),
    leases: () => leases?.count ?? 0,
    quotaUsage: () => quotas.fullest(),
    journal: () => journal.stats(),
  });
  const deps: Deps = { workspaces, patches, maxReadBytes: config.maxReadBytes, lineIndex, runs, snapshots, leases, quotas, copies, node: config.nodeName, recoveries: new Map(), finishing: new Map(), metrics, logger, journal, reserve };
  // Runs this daemon left active: resumed while they still hold their workspace, else ended with their work kept.
  await resumeRuns(deps);
  return {
    files: {
      read: readHandler(deps),
      write: writeHandler(deps),
      edit: editHandler(deps),
      applyPatch: applyPatchHandler(deps),
      delete: deleteHandler(deps),
      move: moveHandler(deps),
      makeDir: makeDirHandler(deps),
      stat: statHandler(deps),
      list: listHandler(deps),
      search: searchHandler(deps, searchPool),
      upload: uploadHandler(deps),
      download: downloadHandler(deps),
      readMedia: readMediaHandler(deps),
    },
    workspaces: {
      createWorkspace: createWorkspaceHandler(deps),
      getWorkspace: getWorkspaceHandler(deps),
      listWorkspaces: listWorkspacesHandler(deps),
      deleteWorkspace: deleteWorkspaceHandler(deps),
      startRun: startRunHandler(deps),
      finishRun: finishRunHandler(deps),
      listRuns: listRunsHandler(deps),
      abandonRun: abandonRunHandler(deps),
      getChangeSet: getChangeSetHandler(deps),
      listSnapshots: listSnapshotsHandler(deps),
      diffSnapshots: diffSnapshotsHandler(deps),
      exportSnapshot: exportSnapshotHandler(deps),
      restoreSnapshot: restoreSnapshotHandler(deps),
      importArchive: importArchiveHandler(deps),
    },
    journal: {
      watch: watchHandler(deps),
      getJournal: getJournalHandler(deps),
    },
    snapshotActiveRuns: () => snapshotActiveRuns(deps),

    close: async () => {
      leases?.stopRenewing();
      await searchPool.close();
      await closePdfPool();
      for (const watching of outside) await watching.close();
      await journal.close();
      await snapshots.flushStatCaches();
      await workspaces.close();
    },
  };
}
