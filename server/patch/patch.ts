// ApplyPatch: the Codex patch format over several files, all or nothing. Every
// section is checked against the current files first (nothing changes when
// one does not fit); then the new contents are staged, the journal's record
// makes the change durable, and the files change; a crash after the record
// is finished at the next start (finishPendingPatches), one before it left
// nothing changed. A step that fails live after the record undoes the steps
// before it and drops the record: the caller told it failed finds nothing
// changed, and no restart applies it later.
import { fail, FileToolsError } from "../errors.js";
import type { Logger } from "../log.js";
import type { MadeDirectories, SetAsideFile, StagedFile, Workspace } from "../workspace/workspace.js";
import type { WorkspaceRegistry } from "../workspace/registry.js";
import type { UsageGate } from "../workspace/usage.js";
import { NO_USAGE } from "../workspace/usage.js";
import { displayPath, parseFilePath, type Components } from "../workspace/paths.js";
import { decodeText, encodeText } from "../text/encoding.js";
import { sha256Hex } from "../text/hash.js";
import { pathKey, withPathLocks } from "../tools/locks.js";
import { textEncodingOf } from "../tools/read.js";
import { MAX_EDIT_BYTES } from "../tools/edit.js";
import { keepingMadeDirectories, madeDirectoryChanges, sha256OrEmpty, type ChangeRecorder, type ToolChange } from "../tools/changes.js";
import { parsePatch, type FilePatch } from "./parse.js";
import { applyHunks } from "./apply.js";
import type { PatchJournal, PatchRecord } from "./journal.js";

export type PatchAction = "added" | "updated" | "deleted" | "moved";

export interface PatchedFile {
  path: string;
  action: PatchAction;
  movedFrom: string;
  version: string;
  sha256Before: string;
  sha256After: string;
}

/** One section, checked: what it writes (and where), what it removes. */
interface Planned {
  action: PatchAction;
  path: Components;
  movedFrom?: Components;
  bytes?: Buffer;
  version: string;
  sha256Before: string;
  /** An updated file's content before the patch, to write back if a later step fails. */
  before?: Buffer;
}

export async function applyPatch(
  workspace: Workspace,
  journal: PatchJournal,
  input: { patch: string; dryRun: boolean },
  recorder?: ChangeRecorder,
  signal?: AbortSignal,
  gate?: UsageGate,
): Promise<PatchedFile[]> {
  const sections = parsePatch(input.patch);
  const parsed = sections.map((section) => ({ section, parts: parseFilePath(section.path), moveTo: section.kind === "update" && section.moveTo !== undefined ? parseFilePath(section.moveTo) : undefined }));
  const paths = parsed.flatMap((p) => [displayPath(p.parts), ...(p.moveTo ? [displayPath(p.moveTo)] : [])]);
  const twice = paths.find((p, i) => paths.indexOf(p) !== i);
  if (twice !== undefined) fail("INVALID_ARGUMENT", `invalid patch: ${twice} is changed by more than one section`);
  return withPathLocks(paths.map((p) => pathKey(workspace.id, p)), async () => {
    const recording = recorder?.isRecording(workspace.id) ?? false;
    const planned: Planned[] = [];
    for (const { section, parts, moveTo } of parsed) planned.push(await plan(workspace, section, parts, moveTo, recording));
    if (input.dryRun) return planned.map((p) => described(p, p.version));
    signal?.throwIfAborted(); // the last moment a cancellation leaves every file as it was
    const writes = planned.filter((p) => p.bytes !== undefined);
    const removes = planned.flatMap((p) => (p.action === "deleted" ? [p.path] : p.movedFrom ? [p.movedFrom] : []));
    const growth = writes.reduce((sum, p) => sum + p.bytes!.length, 0);
    const admission = gate?.admit({ bytes: growth, entries: planned.filter((p) => p.action === "added").length }, "the patch");
    const staged: StagedFile[] = [];
    let id: string;
    try {
      for (const p of writes) staged.push(await workspace.stageDurably(p.path, p.bytes!));
      const record: PatchRecord = {
        workspace: workspace.id,
        writes: writes.map((p, i) => ({ path: displayPath(p.path), staged: staged[i]!.name })),
        removes: removes.map(displayPath),
      };
      id = await journal.commit(record);
    } catch (error) {
      for (const file of staged) await file.discard();
      admission?.settle(NO_USAGE);
      throw error;
    }
    // The change and its record as one: until both are in, the outside watcher waits; directories a failed one leaves are journaled.
    return keepingMadeDirectories(recorder, workspace, async (madeDirectories, recorded) => {
      let setAside: SetAsideFile[];
      try {
        setAside = await changeFiles(workspace, writes.map((p, i) => ({ planned: p, staged: staged[i]! })), removes, madeDirectories);
      } catch (error) {
        await journal.done(id); // undone (or said not to be): the caller is told it failed, so no restart may finish it
        throw error;
      } finally {
        for (const file of staged) await file.discard(); // closes the root each holds (a placed file stays placed)
        admission?.settle(NO_USAGE);
        gate?.recount(); // what the patch added and freed, counted from the tree
      }
      for (const file of setAside) await file.drop();
      await journal.done(id);
      const files: PatchedFile[] = [];
      for (const p of planned) files.push(described(p, p.action === "deleted" ? "" : (await workspace.stat(p.path)).version));
      const changes = files.map((f, i): ToolChange => {
        const kind = f.action === "added" ? "create" : f.action === "updated" ? "modify" : f.action === "deleted" ? "delete" : "move";
        const facts = { type: "file" as const, size: BigInt(planned[i]!.bytes?.length ?? 0), versionBefore: planned[i]!.version, versionAfter: f.version };
        return { kind, path: f.path, sourcePath: f.movedFrom, sha256Before: f.sha256Before, sha256After: f.sha256After, facts };
      });
      await recorder?.record(workspace.id, ...madeDirectoryChanges(madeDirectories), ...changes);
      recorded();
      return files;
    });
  }, signal);
}

/**
 * The change of a live patch, once its record is durable: the staged contents
 * put in place, then the removed files set aside (dropped by the caller once
 * the record is done), the directories the writes made put in `made` (to
 * journal). A step that fails undoes the ones before it, in reverse (old
 * contents written back, added files removed, set-aside files put back, the
 * directories the writes made removed while empty), so that the caller's
 * error means nothing changed; a crash instead leaves the record, and the
 * next start finishes the change.
 */
async function changeFiles(workspace: Workspace, writes: Array<{ planned: Planned; staged: StagedFile }>, removes: Components[], made: MadeDirectories): Promise<SetAsideFile[]> {
  const undo: Array<() => Promise<unknown>> = [];
  const setAside: SetAsideFile[] = [];
  const madeByWrite: MadeDirectories[] = [];
  // Every change the patch makes is counted: the undo takes back the directories its writes made only if no
  // other call changed the tree meanwhile (one may have found them: a MakeDir told they existed). Undefined
  // while another change is under way: they stay then.
  const mark = workspace.changeMark();
  let own = 0;
  const ownChange = <T>(change: () => Promise<T>): Promise<T> => {
    own++;
    return change();
  };
  const alone = (): boolean => mark !== undefined && workspace.changesSince(mark) === own;
  try {
    for (const { planned, staged } of writes) {
      const madeHere: MadeDirectories = [];
      madeByWrite.push(madeHere);
      // Before the write: one that fails may have made some.
      undo.push(async () => {
        while (madeHere.length > 0 && (await ownChange(() => workspace.removeEmptyDirectory(madeHere.at(-1)!.parts, alone)))) madeHere.pop();
      });
      await ownChange(() => workspace.writeFile(planned.path, staged, { createDirs: true, mode: "create-or-replace", madeDirectories: madeHere }));
      const before = planned.before;
      undo.push(() => ownChange<unknown>(() => (before ? workspace.writeFile(planned.path, before, { createDirs: false, mode: "replace-only" }) : workspace.remove(planned.path, { recursive: false }))));
    }
    for (const parts of removes) {
      const file = await ownChange(() => workspace.setAside(parts));
      if (!file) continue;
      undo.push(() => ownChange(() => file.putBack()));
      setAside.push(file);
    }
    return setAside;
  } catch (error) {
    // Every step is tried, even after one fails: each set-aside file's putBack also lets go of its directory.
    let undoError: unknown;
    for (const step of undo.reverse()) await step().catch((e: unknown) => (undoError ??= e));
    if (undoError === undefined) throw error;
    const reason = error instanceof FileToolsError ? error.reason : "IO_ERROR";
    const why = undoError instanceof Error ? undoError.message : String(undoError);
    fail(reason, `${error instanceof Error ? error.message : String(error)}; undoing the files the patch had already changed failed too (${why}): they may stay as the patch left them`);
  } finally {
    made.push(...madeByWrite.flat()); // what the writes made (what an undo left of it)
  }
}

/**
 * Puts the staged contents in place, then removes what goes: the change a
 * journal record names, finished at start-up after a crash. Idempotent (a write whose staged file is gone was
 * placed; a removal of what is gone does nothing), so that a restart can run
 * it again.
 */
async function finishPatch(workspace: Workspace, writes: Array<{ parts: Components; staged: StagedFile | undefined }>, removes: Components[]): Promise<void> {
  for (const { parts, staged } of writes) if (staged) await workspace.writeFile(parts, staged, { createDirs: true, mode: "create-or-replace" });
  for (const parts of removes) await workspace.remove(parts, { recursive: false });
}

/** At start-up, before the sweep of temp files: finishes every patch a crash left committed and unfinished. */
export async function finishPendingPatches(journal: PatchJournal, workspaces: WorkspaceRegistry, logger?: Logger): Promise<number> {
  const pending = await journal.pending();
  for (const { id, record } of pending) {
    if (record) {
      try {
        const workspace = await workspaces.get(record.workspace);
        const writes = [];
        for (const w of record.writes) writes.push({ parts: parseFilePath(w.path), staged: await workspace.adoptStagedFile(w.staged) });
        try {
          await finishPatch(workspace, writes, record.removes.map((p) => parseFilePath(p)));
        } finally {
          for (const w of writes) await w.staged?.discard();
        }
      } catch (error) {
        logger?.error({ workspace: record.workspace, err: error }, "patch not finished at start-up: its record stays for the next start");
        continue; // the record stays: the next start tries again
      }
    }
    await journal.done(id);
  }
  return pending.length;
}

async function plan(workspace: Workspace, section: FilePatch, parts: Components, moveTo: Components | undefined, recording: boolean): Promise<Planned> {
  const shown = displayPath(parts);
  if (section.kind === "add") {
    await mustBeAbsent(workspace, parts, "Add File");
    const bytes = Buffer.from(section.lines.length === 0 ? "" : `${section.lines.join("\n")}\n`);
    return { action: "added", path: parts, bytes, version: "", sha256Before: "" };
  }
  if (section.kind === "delete") {
    const entry = await workspace.stat(parts);
    if (entry.type !== "file") fail(entry.type === "directory" ? "IS_A_DIRECTORY" : "NOT_A_REGULAR_FILE", `${shown} is not a file (Delete File deletes files)`);
    return { action: "deleted", path: parts, version: entry.version, sha256Before: recording ? await sha256OrEmpty(workspace, parts) : "" };
  }
  if (moveTo) await mustBeAbsent(workspace, moveTo, "Move to");
  const file = await workspace.openFile(parts);
  let original: Buffer;
  let encoding;
  try {
    if (file.size > MAX_EDIT_BYTES) fail("QUOTA_EXCEEDED", `${shown} is larger than the ${MAX_EDIT_BYTES / 1024 / 1024} MiB a patch may load`);
    ({ encoding } = await textEncodingOf(file, ""));
    original = await file.readAll();
  } finally {
    await file.close();
  }
  const bytes = section.hunks.length === 0 ? original : encodeText(applyHunks(decodeText(original, encoding), section.hunks, shown), encoding, shown);
  if (moveTo) return { action: "moved", path: moveTo, movedFrom: parts, bytes, version: file.entry.version, sha256Before: sha256Hex(original) };
  return { action: "updated", path: parts, bytes, version: file.entry.version, sha256Before: sha256Hex(original), before: original };
}

async function mustBeAbsent(workspace: Workspace, parts: Components, section: string): Promise<void> {
  const exists = await workspace.stat(parts).then(
    () => true,
    (error: unknown) => {
      if (error instanceof Error && "reason" in error && error.reason === "NOT_FOUND") return false;
      throw error;
    },
  );
  if (exists) fail("ALREADY_EXISTS", `${displayPath(parts)} already exists (${section} makes a new file)`);
}

function described(p: Planned, version: string): PatchedFile {
  return {
    path: displayPath(p.path),
    action: p.action,
    movedFrom: p.movedFrom ? displayPath(p.movedFrom) : "",
    version,
    sha256Before: p.sha256Before,
    sha256After: p.bytes === undefined ? "" : sha256Hex(p.bytes),
  };
}
