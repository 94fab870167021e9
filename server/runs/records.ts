// The schemas of what the runs module persists under DATA_DIR/runs (a run's
// JSON record, its JSON-lines change set) and of the change set a snapshot
// manifest carries. Everything read back from disk or the store is untrusted
// (another process, a torn write, an older or newer daemon) and is checked
// against these before it is used.
import { z } from "zod";

const SHA256_OR_EMPTY = z.string().regex(/^([0-9a-f]{64})?$/);

export const ChangeSchema = z.object({
  kind: z.enum(["create", "modify", "delete", "move"]),
  path: z.string(),
  sourcePath: z.string(),
  sha256Before: SHA256_OR_EMPTY,
  sha256After: SHA256_OR_EMPTY,
  time: z.iso.datetime(),
});

export const ChangeSummarySchema = z.object({
  created: z.int().nonnegative(),
  modified: z.int().nonnegative(),
  deleted: z.int().nonnegative(),
  moved: z.int().nonnegative(),
});

export const RunInfoSchema = z.object({
  id: z.string().regex(/^run-[0-9]{8}T[0-9]{9}Z-[0-9a-f]{8}$/),
  workspace: z.string(),
  startedAt: z.iso.datetime(),
  restoredFrom: z.string(),
  /** The snapshot the run started from, then the run's own latest: its next snapshot's parent (absent in records older than the field). */
  base: z.string().optional(),
  /** The head its next snapshot must replace to publish: base, except after a restore of an older snapshot (absent: base). */
  follows: z.string().optional(),
  /** The node running it (absent in records older than the field). */
  node: z.string().optional(),
  /** Why it ended without its FinishRun (lease lost while the daemon was down, abandoned by an operator). */
  endReason: z.string().optional(),
  labels: z.record(z.string(), z.string()),
  state: z.enum(["active", "finished"]),
  finishedAt: z.iso.datetime().optional(),
  snapshotId: z.string().optional(),
});

/** `text` parsed as JSON and checked against `schema`; the problem in a few words otherwise. */
export function parseRecord<T>(schema: z.ZodType<T>, text: string): { ok: true; value: T } | { ok: false; problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, problem: "not valid JSON" };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0]!;
  return { ok: false, problem: `${issue.path.join(".") || "(the record)"}: ${issue.message}` };
}
