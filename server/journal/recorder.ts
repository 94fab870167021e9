// The change recorder the mutating tools report to (tools/changes.ts), bound
// to one call's caller: each change goes to the active run's change set (as
// before) and to the workspace's journal, both before the call answers, in
// the room the reserve keeps for them when the disk is full (reserve.ts).
import type { RunManager } from "../runs/runs.js";
import type { ChangeRecorder, ToolChange } from "../tools/changes.js";
import type { Journal } from "./journal.js";
import type { SpaceReserve } from "./reserve.js";
import type { ChangeNote, JournalKind } from "./records.js";

/** Who calls: the token's name ("" without a tokens file), the RPC ("Write"), the client's call id ("" when not sent). */
export interface Caller {
  token: string;
  rpc: string;
  callId: string;
}

const KINDS: Record<ToolChange["kind"], JournalKind> = {
  create: "created",
  modify: "modified",
  delete: "deleted",
  move: "moved",
  mkdir: "made-directory",
};

/** A tree replaced or merged into at once (RestoreSnapshot, ImportArchive): one entry, before the call answers. */
export async function journalReplaced(journal: Journal, runs: RunManager, reserve: SpaceReserve, caller: Caller, workspaceId: string, path: string): Promise<void> {
  const run = runs.activeRun(workspaceId)?.id ?? "";
  const note: ChangeNote = { kind: "replaced", path, from: "", type: "directory", size: 0, sha256: "", versionBefore: "", versionAfter: "" };
  await reserve.afterChange(() => journal.append(workspaceId, [note], { ...caller, run }));
}

export class JournalRecorder implements ChangeRecorder {
  constructor(
    private readonly journal: Journal,
    private readonly runs: RunManager,
    private readonly reserve: SpaceReserve,
    private readonly caller: Caller,
  ) {}

  isRecording(workspaceId: string): boolean {
    return this.runs.isRecording(workspaceId);
  }

  async record(workspaceId: string, change: ToolChange): Promise<void> {
    const { facts, kind, ...entry } = change;
    const run = this.runs.activeRun(workspaceId)?.id ?? "";
    if (kind !== "mkdir") await this.reserve.afterChange(() => this.runs.record(workspaceId, { ...entry, kind }));
    const note: ChangeNote = {
      kind: KINDS[kind],
      path: change.path,
      from: change.sourcePath,
      type: facts.type,
      size: Number(facts.size),
      sha256: kind === "delete" || kind === "mkdir" ? "" : change.sha256After,
      versionBefore: facts.versionBefore,
      versionAfter: facts.versionAfter,
    };
    await this.reserve.afterChange(() => this.journal.append(workspaceId, [note], { ...this.caller, run }));
  }
}
