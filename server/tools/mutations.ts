// Delete, Move and MakeDir: path parsing, per-path locks, then the workspace.
import type { Workspace } from "../workspace/workspace.js";
import type { Entry } from "../workspace/entry.js";
import { displayPath, parseFilePath, parsePath } from "../workspace/paths.js";
import { pathKey, withPathLocks } from "./locks.js";

export async function deletePath(workspace: Workspace, rawPath: string, options: { recursive: boolean; ifVersion?: string }): Promise<{ path: string; existed: boolean }> {
  const parts = parsePath(rawPath);
  const path = displayPath(parts);
  const existed = await withPathLocks([pathKey(workspace.id, path)], () => workspace.remove(parts, options));
  return { path, existed };
}

export async function movePath(
  workspace: Workspace,
  rawSource: string,
  rawDestination: string,
  options: { overwrite: boolean; createDirs: boolean; ifVersion?: string },
): Promise<{ source: string; destination: string; entry: Entry }> {
  const source = parseFilePath(rawSource);
  const destination = parseFilePath(rawDestination);
  const keys = [pathKey(workspace.id, displayPath(source)), pathKey(workspace.id, displayPath(destination))];
  const entry = await withPathLocks(keys, () => workspace.move(source, destination, options));
  return { source: displayPath(source), destination: displayPath(destination), entry };
}

export async function makeDirectory(workspace: Workspace, rawPath: string, options: { parents: boolean }): Promise<{ path: string; created: boolean }> {
  const parts = parsePath(rawPath);
  const path = displayPath(parts);
  const created = await withPathLocks([pathKey(workspace.id, path)], () => workspace.makeDir(parts, options));
  return { path, created };
}
