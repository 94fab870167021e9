// What every handler gets, and the handler type of each RPC by name.
import type { Files } from "@filetools/proto/filetools/v1/files_pb.js";
import type { Workspaces } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import type { Journal as JournalService } from "@filetools/proto/filetools/v1/journal_pb.js";
import type { HandlerFor, MethodsOf } from "../grpc/handlers.js";
import type { LineIndex } from "../lineindex/line-index.js";
import type { PatchJournal } from "../patch/journal.js";
import type { Quotas } from "../quotas/quotas.js";
import type { RunServices } from "../runs/lifecycle.js";
import type { Journal } from "../journal/journal.js";
import type { SpaceReserve } from "../journal/reserve.js";

/** The run services (workspaces, runs, snapshots, copies, leases), and what the file tools need besides. */
export interface Deps extends RunServices {
  /** Server maximum for Read's max_bytes. */
  maxReadBytes: number;
  /** Sparse line index shared by Read and Stat (one per daemon). */
  lineIndex?: LineIndex;
  /** Per-workspace usage and limits: the gate every mutation passes. */
  quotas: Quotas;
  /** The journal of ApplyPatch's changes (DATA_DIR/patches). */
  patches: PatchJournal;
  /** The journal of changes of every workspace (DATA_DIR/journal): Watch and GetJournal read it. */
  journal: Journal;
  /** Room on the data directory's disk for the journal entries of the changes in flight: ensured before every change. */
  reserve: SpaceReserve;
}

export type FilesHandler<K extends keyof MethodsOf<typeof Files>> = HandlerFor<MethodsOf<typeof Files>[K]>;
export type WorkspacesHandler<K extends keyof MethodsOf<typeof Workspaces>> = HandlerFor<MethodsOf<typeof Workspaces>[K]>;
export type JournalHandler<K extends keyof MethodsOf<typeof JournalService>> = HandlerFor<MethodsOf<typeof JournalService>[K]>;
