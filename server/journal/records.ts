// What one journal entry holds, as the journal writes it (one JSON line) and
// reads it back. Everything read back from disk is untrusted (a torn write,
// another program, an older or newer daemon) and is checked here first.
import { z } from "zod";

export type JournalKind = "created" | "modified" | "deleted" | "moved" | "made-directory" | "replaced";
export type JournalType = "file" | "directory" | "symlink" | "other" | "";

/** Who made a change; every field "" for an outside change. */
export interface Actor {
  token: string;
  run: string;
  rpc: string;
  callId: string;
}

/** A change as a tool reports it, before the journal numbers it. */
export interface ChangeNote {
  kind: JournalKind;
  path: string;
  /** Source of a move, else "". */
  from: string;
  type: JournalType;
  size: number;
  /** SHA-256 (hex) of the content after, when known, else "". */
  sha256: string;
  versionBefore: string;
  versionAfter: string;
  /**
   * Where a move or deletion took effect when a link to a directory on the
   * way led elsewhere than `path` (and `from`): those paths, links resolved.
   * For the outside watcher, which hears of the change by them; not journaled.
   */
  landed?: { path: string; from: string };
}

export interface JournalRecord extends ChangeNote, Actor {
  seq: number;
  /** ISO 8601. */
  time: string;
  outside: boolean;
}

export const NO_ACTOR: Actor = { token: "", run: "", rpc: "", callId: "" };

const RecordSchema = z.object({
  seq: z.int().positive(),
  time: z.iso.datetime(),
  kind: z.enum(["created", "modified", "deleted", "moved", "made-directory", "replaced"]),
  path: z.string().startsWith("/"),
  from: z.string(),
  type: z.enum(["file", "directory", "symlink", "other", ""]),
  size: z.number().nonnegative(),
  sha256: z.string().regex(/^([0-9a-f]{64})?$/),
  versionBefore: z.string(),
  versionAfter: z.string(),
  token: z.string(),
  run: z.string(),
  rpc: z.string(),
  callId: z.string(),
  outside: z.boolean(),
});

/** One line of a segment → its record, or undefined when it is not a valid one. */
export function parseLine(line: string): JournalRecord | undefined {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return undefined;
  }
  const parsed = RecordSchema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}

export function formatLine(record: JournalRecord): string {
  return JSON.stringify({ ...record, landed: undefined }) + "\n"; // (JSON leaves undefined out)
}
