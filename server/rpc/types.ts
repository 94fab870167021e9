// What every handler gets, and the handler type of each RPC by name.
import type { Files } from "@filetools/proto/filetools/v1/files_pb.js";
import type { Workspaces } from "@filetools/proto/filetools/v1/workspaces_pb.js";
import type { HandlerFor, MethodsOf } from "../grpc/handlers.js";
import type { WorkspaceRegistry } from "../workspace/registry.js";
import type { LineIndex } from "../lineindex/line-index.js";
import type { RunManager } from "../runs/runs.js";
import type { Snapshots } from "../snapshots/snapshots.js";
import type { Leases } from "../runs/leases.js";
import type { Quotas } from "../quotas/quotas.js";
import type { RunServices } from "../runs/lifecycle.js";

export interface Deps extends RunServices {
  workspaces: WorkspaceRegistry;
  /** Server maximum for Read's max_bytes. */
  maxReadBytes: number;
  /** Sparse line index shared by Read and Stat (one per daemon). */
  lineIndex?: LineIndex;
  /** Active runs and change sets; also the change recorder the mutating tools report to. */
  runs: RunManager;
  /** Snapshots in the store. */
  snapshots: Snapshots;
  /** Run leases, on a store daemons share (s3://). */
  leases?: Leases;
  /** Per-workspace usage and limits: the gate every mutation passes. */
  quotas: Quotas;
}

export type FilesHandler<K extends keyof MethodsOf<typeof Files>> = HandlerFor<MethodsOf<typeof Files>[K]>;
export type WorkspacesHandler<K extends keyof MethodsOf<typeof Workspaces>> = HandlerFor<MethodsOf<typeof Workspaces>[K]>;
