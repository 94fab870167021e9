// Edit: exact replacements, all or nothing, bytes outside the edits untouched (SPEC 4.1).
import { fail } from "../errors.js";
import type { Workspace, WriteResult } from "../workspace/workspace.js";
import type { UsageGate } from "../workspace/usage.js";
import { displayPath, parseFilePath } from "../workspace/paths.js";
import { applyEdits, type TextEdit } from "../text/edit.js";
import { sha256Hex } from "../text/hash.js";
import { pathKey, withPathLocks } from "./locks.js";
import { textEncodingOf } from "./read.js";
import { writtenFacts, type ChangeRecorder } from "./changes.js";

/** Edits load the whole file: bound the memory one call can take. */
export const MAX_EDIT_BYTES = 64 * 1024 * 1024;

export interface EditInput {
  path: string;
  edits: TextEdit[];
  dryRun: boolean;
  ifVersion?: string;
  encoding: string;
}

export interface EditOutcome {
  path: string;
  replacements: number;
  diff: string;
  /** The diff stops at DIFF_MAX_BYTES. */
  diffTruncated: boolean;
  sha256Before: string;
  sha256After: string;
  version: string;
}

export async function editFile(workspace: Workspace, input: EditInput, recorder?: ChangeRecorder, signal?: AbortSignal, gate?: UsageGate): Promise<EditOutcome> {
  const parts = parseFilePath(input.path);
  const path = displayPath(parts);
  return withPathLocks([pathKey(workspace.id, path)], async () => {
    const file = await workspace.openFile(parts);
    let original: Buffer;
    let encoding;
    try {
      if (input.ifVersion && input.ifVersion !== file.entry.version) {
        fail("CONTENT_CHANGED", `${path} changed: its version is ${file.entry.version}, not ${input.ifVersion}`, { current_version: file.entry.version });
      }
      if (file.size > MAX_EDIT_BYTES) fail("QUOTA_EXCEEDED", `${path} is larger than the ${MAX_EDIT_BYTES / 1024 / 1024} MiB an edit may load; use Read and Write`);
      ({ encoding } = await textEncodingOf(file, input.encoding));
      original = await file.readAll();
    } finally {
      await file.close();
    }
    const result = applyEdits(original, input.edits, encoding, path);
    const outcome = { path, replacements: result.replacements, diff: result.diff, diffTruncated: result.diffTruncated, sha256Before: sha256Hex(original), sha256After: sha256Hex(result.updated) };
    if (input.dryRun) return { ...outcome, version: file.entry.version };
    signal?.throwIfAborted(); // the last moment a cancellation leaves the file as it was
    // The version read above: a change made behind our back since then is refused, not lost.
    const whilePlacing = async (placed: WriteResult) =>
      recorder?.record(workspace.id, { kind: "modify", path, sourcePath: "", sha256Before: outcome.sha256Before, sha256After: outcome.sha256After, facts: writtenFacts(placed) });
    const written = await workspace.writeFile(parts, result.updated, { createDirs: false, mode: "replace-only", ifVersion: file.entry.version, gate, whilePlacing });
    return { ...outcome, version: written.entry.version };
  }, signal);
}
