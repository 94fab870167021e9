// The change recorder the mutating tools report to (tools/changes.ts), bound
// to one call's caller: each change goes to the active run's change set (as
// before) and to the workspace's journal, both before the call answers, in
// the room the reserve keeps for them when the disk is full (reserve.ts).
import type { RunManager } from "../runs/runs.js";
import { landedFacts, madeDirectoryChanges, type ChangeRecorder, type ToolChange } from "../tools/changes.js";
import type { MergedInto } from "../workspace/workspace.js";
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

/**
 * A tree replaced or merged into at once (RestoreSnapshot, ImportArchive): one entry, after the directories
 * made on the way to it (`merged`, an import's), in one append before the call answers.
 */
export async function journalReplaced(journal: Journal, runs: RunManager, reserve: SpaceReserve, caller: Caller, workspaceId: string, path: string, merged?: MergedInto): Promise<void> {
  const run = runs.activeRun(workspaceId)?.id ?? "";
  const landed = merged && landedFacts(path, "", { parts: merged.landed });
  const note: ChangeNote = { kind: "replaced", path, from: "", type: "directory", size: 0, sha256: "", versionBefore: "", versionAfter: "", landed };
  const made = merged ? madeDirectoryChanges(merged.madeDirectories).map(noteOf) : [];
  await reserve.afterChange(() => journal.append(workspaceId, [...made, note], { ...caller, run }));
}

/** A tool's change as the journal notes it. */
function noteOf(change: ToolChange): ChangeNote {
  return {
    kind: KINDS[change.kind],
    path: change.path,
    from: change.sourcePath,
    type: change.facts.type,
    size: Number(change.facts.size),
    sha256: change.kind === "delete" || change.kind === "mkdir" ? "" : change.sha256After,
    versionBefore: change.facts.versionBefore,
    versionAfter: change.facts.versionAfter,
    landed: change.facts.landed,
  };
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

  async record(workspaceId: string, ...changes: ToolChange[]): Promise<void> {
    const run = this.runs.activeRun(workspaceId)?.id ?? "";
    for (const { facts, kind, ...entry } of changes) {
      if (kind !== "mkdir") await this.reserve.afterChange(() => this.runs.record(workspaceId, { ...entry, kind }));
    }
    const notes = changes.map(noteOf);
    // One append for the call's changes: one sync, and nothing of another call's between them.
    if (notes.length > 0) await this.reserve.afterChange(() => this.journal.append(workspaceId, notes, { ...this.caller, run }));
  }
}
