// Delete, Move and MakeDir: path parsing, per-path locks, then the workspace.
import type { Landed, Workspace } from "../workspace/workspace.js";
import type { Entry } from "../workspace/entry.js";
import type { UsageGate } from "../workspace/usage.js";
import { displayPath, parseFilePath, parsePath } from "../workspace/paths.js";
import { pathKey, withPathLocks } from "./locks.js";
import { keepingMadeDirectories, landedFacts, madeDirectoryChanges, sha256OrEmpty, type ChangeRecorder } from "./changes.js";

export async function deletePath(
  workspace: Workspace,
  rawPath: string,
  options: { recursive: boolean; ifVersion?: string },
  recorder?: ChangeRecorder,
  signal?: AbortSignal,
  gate?: UsageGate,
): Promise<{ path: string; existed: boolean }> {
  const parts = parsePath(rawPath);
  const path = displayPath(parts);
  const existed = await withPathLocks([pathKey(workspace.id, path)], async () => {
    const recording = recorder?.isRecording(workspace.id) ?? false;
    const before = recording && parts.length > 0 ? await sha256OrEmpty(workspace, parts) : "";
    const prior = recorder && parts.length > 0 ? await workspace.stat(parts).catch(() => null) : null;
    signal?.throwIfAborted(); // the last moment a cancellation keeps the file
    return workspace.recorded(async () => {
      const landed: Landed = {};
      const removed = await workspace.remove(parts, { ...options, gate, landed });
      if (removed && prior) {
        const facts = { type: prior.type, size: 0n, versionBefore: prior.version, versionAfter: "", landed: landedFacts(path, "", landed) };
        await recorder?.record(workspace.id, { kind: "delete", path, sourcePath: "", sha256Before: before, sha256After: "", facts });
      }
      return removed;
    });
  }, signal);
  return { path, existed };
}

export async function movePath(
  workspace: Workspace,
  rawSource: string,
  rawDestination: string,
  options: { overwrite: boolean; createDirs: boolean; ifVersion?: string },
  recorder?: ChangeRecorder,
  signal?: AbortSignal,
  gate?: UsageGate,
): Promise<{ source: string; destination: string; entry: Entry }> {
  const source = parseFilePath(rawSource);
  const destination = parseFilePath(rawDestination);
  const keys = [pathKey(workspace.id, displayPath(source)), pathKey(workspace.id, displayPath(destination))];
  const entry = await withPathLocks(keys, async () => {
    const recording = recorder?.isRecording(workspace.id) ?? false;
    const hash = recording ? await sha256OrEmpty(workspace, source) : "";
    const prior = recorder ? await workspace.stat(source).catch(() => null) : null;
    signal?.throwIfAborted(); // the last moment a cancellation keeps the tree as it was
    return keepingMadeDirectories(recorder, workspace, async (made) => {
      const landed: Landed = {};
      const moved = await workspace.move(source, destination, { ...options, gate, madeDirectories: made, landed });
      const [path, sourcePath] = [displayPath(destination), displayPath(source)];
      await recorder?.record(workspace.id, ...madeDirectoryChanges(made), {
        kind: "move",
        path,
        sourcePath,
        sha256Before: hash,
        sha256After: hash,
        facts: {
          type: moved.type,
          size: moved.type === "directory" ? 0n : moved.size,
          versionBefore: prior?.version ?? "",
          versionAfter: moved.version,
          landed: landedFacts(path, sourcePath, landed),
        },
      });
      return moved;
    });
  }, signal);
  return { source: displayPath(source), destination: displayPath(destination), entry };
}

export async function makeDirectory(
  workspace: Workspace,
  rawPath: string,
  options: { parents: boolean },
  signal?: AbortSignal,
  gate?: UsageGate,
  recorder?: ChangeRecorder,
): Promise<{ path: string; created: boolean }> {
  const parts = parsePath(rawPath);
  const path = displayPath(parts);
  const created = await withPathLocks(
    [pathKey(workspace.id, path)],
    async () => {
      signal?.throwIfAborted(); // the last moment a cancellation makes nothing
      return keepingMadeDirectories(recorder, workspace, async (made) => {
        const created = await workspace.makeDir(parts, { ...options, gate, madeDirectories: made });
        const changes = madeDirectoryChanges(made);
        if (created && recorder) {
          const entry = await workspace.stat(parts);
          changes.push({ kind: "mkdir", path, sourcePath: "", sha256Before: "", sha256After: "", facts: { type: entry.type, size: 0n, versionBefore: "", versionAfter: entry.version } });
        }
        await recorder?.record(workspace.id, ...changes);
        return created;
      });
    },
    signal,
  );
  return { path, created };
}
