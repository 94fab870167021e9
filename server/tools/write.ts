// Write: text (encoded, newlines normalised) or bytes, atomically (SPEC 4.1).
import { FileToolsError } from "../errors.js";
import type { MadeDirectories, Workspace, WriteMode, WriteResult } from "../workspace/workspace.js";
import type { Components } from "../workspace/paths.js";
import type { UsageGate } from "../workspace/usage.js";
import { displayPath, parseFilePath } from "../workspace/paths.js";
import { bomBytes, bomLength, encodeText, resolveEncoding } from "../text/encoding.js";
import { applyNewlineMode, usesCrlf, type NewlineMode } from "../text/newline.js";
import { sha256Hex } from "../text/hash.js";
import { pathKey, withPathLocks } from "./locks.js";
import { keepingMadeDirectories, sha256OfFile, sha256OrEmpty, writtenChanges, type ChangeRecorder } from "./changes.js";

/** Enough of an existing file to tell its BOM and line-ending style. */
const STYLE_HEAD_BYTES = 64 * 1024;

export interface WriteInput {
  path: string;
  body: { text: string } | { bytes: Uint8Array };
  encoding: string;
  createDirs: boolean;
  mode: WriteMode | "append";
  newline: NewlineMode;
  ifVersion?: string;
}

export interface WriteOutcome extends WriteResult {
  sha256: string;
}

export async function writeFile(workspace: Workspace, input: WriteInput, recorder?: ChangeRecorder, signal?: AbortSignal, gate?: UsageGate): Promise<WriteOutcome> {
  const parts = parseFilePath(input.path);
  return withPathLocks([pathKey(workspace.id, displayPath(parts))], async () => {
    const recording = recorder?.isRecording(workspace.id) ?? false;
    const before = recording ? await sha256OrEmpty(workspace, parts) : "";
    return keepingMadeDirectories(recorder, workspace, (made, recorded) => {
      const record = async (result: WriteResult, sha256: string) => {
        await recorder?.record(workspace.id, ...writtenChanges(result, displayPath(parts), before, sha256));
        recorded();
      };
      return writeUnlocked(workspace, parts, input, gate, signal, record, made);
    });
  }, signal);
}

async function writeUnlocked(
  workspace: Workspace,
  parts: Components,
  input: WriteInput,
  gate: UsageGate | undefined,
  signal: AbortSignal | undefined,
  record: (result: WriteResult, sha256: string) => Promise<void>,
  made: MadeDirectories,
): Promise<WriteOutcome> {
  const bytes = "bytes" in input.body ? input.body.bytes : await encodeForFile(workspace, parts, input.body.text, input);
  signal?.throwIfAborted(); // the last moment a cancellation leaves the file as it was
  const options = { createDirs: input.createDirs, ifVersion: input.ifVersion, gate, madeDirectories: made };
  if (input.mode !== "append") {
    const sha256 = sha256Hex(bytes);
    const result = await workspace.writeFile(parts, bytes, { ...options, mode: input.mode, whilePlacing: async (placed) => record(placed, sha256) });
    return { ...result, sha256 };
  }
  const result = await workspace.appendFile(parts, bytes, options);
  const sha256 = await sha256OfFile(workspace, parts);
  await record(result, sha256);
  return { ...result, sha256 };
}

/**
 * Encodes text the way the file it replaces is written: the file's BOM and
 * (with PRESERVE) its CRLF line endings are kept; a new UTF-16LE file gets a
 * BOM so that readers can tell its encoding.
 */
async function encodeForFile(workspace: Workspace, parts: Components, text: string, input: WriteInput): Promise<Buffer> {
  const head = await existingHead(workspace, parts);
  const { encoding } = resolveEncoding(input.encoding, head ?? Buffer.alloc(0));
  const body = encodeText(applyNewlineMode(text, input.newline, head !== null && usesCrlf(head, encoding)), encoding, "content");
  const wantsBom = input.mode !== "append" && !text.startsWith("\uFEFF") && (head ? bomLength(head, encoding) > 0 : encoding === "utf-16le");
  return wantsBom ? Buffer.concat([bomBytes(encoding), body]) : body;
}

async function existingHead(workspace: Workspace, parts: Components): Promise<Buffer | null> {
  try {
    const file = await workspace.openFile(parts);
    try {
      return await file.readAt(0, STYLE_HEAD_BYTES);
    } finally {
      await file.close();
    }
  } catch (error) {
    if (error instanceof FileToolsError && error.reason === "NOT_FOUND") return null;
    throw error;
  }
}
