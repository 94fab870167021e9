// The change recorder the mutating tools report to: every change goes to the
// workspace's journal (server/journal) and, while a run is active, to the
// run's change set (SPEC section 1, "change set"). The journal's recorder
// implements it; the tools hash what was there before only while a run is
// active (the change set needs it, the journal does not).
import type { Landed, MadeDirectories, Workspace, WriteResult } from "../workspace/workspace.js";
import { hashFile } from "../workspace/hash-tree.js";
import { displayPath, type Components } from "../workspace/paths.js";
import type { Entry, EntryType } from "../workspace/entry.js";

export type ChangeKind = "create" | "modify" | "delete" | "move";

export interface Change {
  kind: ChangeKind;
  /** Workspace path (the destination of a move). */
  path: string;
  /** Source of a move, else "". */
  sourcePath: string;
  /** SHA-256 (hex) before, "" when there was no content (or a directory). */
  sha256Before: string;
  /** SHA-256 (hex) after, "" when there is none. */
  sha256After: string;
  /** ISO 8601 time. */
  time: string;
}

/** What the journal knows of a change besides what a change set holds. */
export interface ChangeFacts {
  /** The entry's type after the change (before it, for a deletion). */
  type: EntryType;
  /** Size after ("0" for a deletion or a directory). */
  size: bigint;
  /** "" when nothing was there. */
  versionBefore: string;
  /** "" after a deletion. */
  versionAfter: string;
  /** Where a move or deletion took effect, when a link on the way led elsewhere (records.ts ChangeNote.landed). */
  landed?: { path: string; from: string };
}

/** ChangeFacts.landed: the paths where a change took effect (`landed`, links resolved), when they are not the paths asked. */
export function landedFacts(path: string, from: string, landed: Landed): ChangeFacts["landed"] {
  const landedPath = landed.parts ? displayPath(landed.parts) : path;
  const landedFrom = landed.from ? displayPath(landed.from) : from;
  return landedPath === path && landedFrom === from ? undefined : { path: landedPath, from: landedFrom };
}

/** A change as a tool reports it: a change-set entry (or a directory made), with its facts. */
export interface ToolChange extends Omit<Change, "time" | "kind"> {
  kind: ChangeKind | "mkdir";
  facts: ChangeFacts;
}

export interface ChangeRecorder {
  /** True when a run is active on the workspace (only then is hashing the content before worth it). */
  isRecording(workspaceId: string): boolean;
  /** Journals a call's changes (in one append, in order), and appends each to the active run's change set (durably, in order), before the call answers. */
  record(workspaceId: string, ...changes: ToolChange[]): Promise<void>;
}

/** The facts of a file written (Write, Upload, Edit). */
export function writtenFacts(result: { entry: Entry; versionBefore: string }): ChangeFacts {
  return { type: result.entry.type, size: result.entry.size, versionBefore: result.versionBefore, versionAfter: result.entry.version };
}

/** A file written (Write, Upload): the directories made on its way, then the file, created or modified. */
export function writtenChanges(result: WriteResult, path: string, sha256Before: string, sha256After: string): ToolChange[] {
  return [...madeDirectoryChanges(result.madeDirectories), { kind: result.created ? "create" : "modify", path, sourcePath: "", sha256Before, sha256After, facts: writtenFacts(result) }];
}

/**
 * The directories a call made on its way (parents first), as changes to
 * journal before the call's own, in the same append: a watcher gets a
 * call's parents before what it put in them, and in a bound workspace the
 * kernel's notification of them is told apart as the daemon's own, not
 * `outside`.
 */
export function madeDirectoryChanges(made: MadeDirectories): ToolChange[] {
  return made
    .filter((directory) => directory.version !== "") // made and replaced at once: not there to tell
    .map((directory) => ({
      kind: "mkdir",
      path: displayPath(directory.parts),
      sourcePath: "",
      sha256Before: "",
      sha256After: "",
      facts: { type: "directory", size: 0n, versionBefore: "", versionAfter: directory.version },
    }));
}

/**
 * Runs a change that may make directories on its way, with its record (as
 * Workspace.recorded), given where the workspace puts the directories it
 * made and what to call once the change's record (theirs with it) is in:
 * when the change fails before that, those it left (another call overlapped
 * it, so they stay) are journaled as its own before the error goes on.
 */
export async function keepingMadeDirectories<T>(
  recorder: ChangeRecorder | undefined,
  workspace: Workspace,
  change: (made: MadeDirectories, recorded: () => void) => Promise<T>,
): Promise<T> {
  return workspace.recorded(async () => {
    const made: MadeDirectories = [];
    let journaled = false;
    try {
      return await change(made, () => void (journaled = true));
    } catch (error) {
      if (!journaled && made.length > 0) await recorder?.record(workspace.id, ...madeDirectoryChanges(made)).catch(() => undefined);
      throw error;
    }
  });
}

/** SHA-256 (hex) of a file's whole content, read through the workspace. */
export async function sha256OfFile(workspace: Workspace, parts: Components): Promise<string> {
  return (await hashFile(workspace, parts)).sha256;
}

/** SHA-256 of a regular file, or "" when it is absent, not a regular file, or unreadable. */
export async function sha256OrEmpty(workspace: Workspace, parts: Components): Promise<string> {
  try {
    const entry = await workspace.stat(parts);
    if (entry.type !== "file" && entry.type !== "symlink") return "";
    return await sha256OfFile(workspace, parts);
  } catch {
    return "";
  }
}
