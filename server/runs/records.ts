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

/**
 * Elements of one JSON array (or members of one object) past which a text is
 * refused unparsed: JSON.parse ends the whole process (a V8 "invalid size
 * error", no exception) on an array of 2^27 elements, which a 300 KB gzip
 * makes. No record holds a tenth of this (a table of contents: one element
 * per entry and chunk, at most ~1.1 million).
 */
export const MAX_JSON_ELEMENTS = 32 * 1024 * 1024;
/** Nesting past which a text that long is refused unparsed (records nest a few levels; the scan keeps a count per level). */
const MAX_JSON_NESTING = 256;

/** `text` parsed as JSON and checked against `schema`; the problem in a few words otherwise. */
export function parseRecord<T>(schema: z.ZodType<T>, text: string): { ok: true; value: T } | { ok: false; problem: string } {
  const tooLarge = outsizedJson(text);
  if (tooLarge) return { ok: false, problem: tooLarge };
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

/**
 * What makes `text` too large a JSON text to parse (an array or object past
 * MAX_JSON_ELEMENTS, or nesting past MAX_JSON_NESTING), else undefined. Only
 * a text of twice that many characters can hold one: others are not scanned.
 */
function outsizedJson(text: string): string | undefined {
  if (text.length < 2 * MAX_JSON_ELEMENTS) return undefined;
  const elements: number[] = []; // per open array or object, its commas so far
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // an escape: the next character is taken as it is
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (elements.push(0) > MAX_JSON_NESTING) return `nested more than ${MAX_JSON_NESTING} levels deep`;
    } else if (c === 0x5d || c === 0x7d) elements.pop();
    else if (c === 0x2c && elements.length > 0 && ++elements[elements.length - 1]! >= MAX_JSON_ELEMENTS) {
      return `an array or object of more than ${MAX_JSON_ELEMENTS} elements`;
    }
  }
  return undefined;
}
