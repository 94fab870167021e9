// The change recorder the mutating tools report to (SPEC section 1, "change
// set"). The runs module implements it; a workspace without an active run
// records nothing, and the tools skip the extra hashing.
import { createHash } from "node:crypto";
import type { Workspace } from "../workspace/workspace.js";
import type { Components } from "../workspace/paths.js";

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

export interface ChangeRecorder {
  /** True when a run is active on the workspace (only then is hashing worth it). */
  isRecording(workspaceId: string): boolean;
  /** Appends a change to the active run's change set (durably, in order). */
  record(workspaceId: string, change: Omit<Change, "time">): Promise<void>;
}

/** SHA-256 (hex) of a file's whole content, read through the workspace. */
export async function sha256OfFile(workspace: Workspace, parts: Components): Promise<string> {
  const file = await workspace.openFile(parts);
  try {
    const hash = createHash("sha256");
    for await (const chunk of file.chunks()) hash.update(chunk);
    return hash.digest("hex");
  } finally {
    await file.close();
  }
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
