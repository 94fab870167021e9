// The workspaces a daemon serves: managed ones under DATA_DIR/workspaces, and
// host directories an operator bound at start-up (--bind NAME=DIR).
import { promises as fsp } from "node:fs";
import path from "node:path";
import { fail } from "../errors.js";
import { errnoOf } from "./errno.js";
import { Workspace } from "./workspace.js";
import { Staging } from "./staging.js";
import { Directory } from "./directory.js";
import { at } from "./resolver.js";
import { randomBytes } from "node:crypto";
import { syncDirectory } from "./sync-directory.js";

export const WORKSPACE_ID_PATTERN = /^[a-z0-9][a-z0-9._-]{0,62}$/;

export class WorkspaceRegistry {
  /** Opened workspaces, by id (bound ones are opened at start-up and stay open). */
  private readonly open = new Map<string, Promise<Workspace>>();

  private constructor(
    private readonly managedDir: string,
    private readonly bound: ReadonlySet<string>,
  ) {}

  /**
   * Prepares the data directory and opens every bound directory. Fails (and
   * the daemon does not start) when containment cannot be guaranteed here.
   */
  static async start(dataDir: string, binds: ReadonlyMap<string, string>): Promise<WorkspaceRegistry> {
    const managedDir = path.resolve(dataDir, "workspaces");
    await fsp.mkdir(managedDir, { recursive: true });
    await assertProcFdWorks(managedDir);
    await recoverSwaps(managedDir);
    const registry = new WorkspaceRegistry(managedDir, new Set(binds.keys()));
    for (const [id, hostDir] of binds) {
      if (!WORKSPACE_ID_PATTERN.test(id)) throw new Error(`--bind: invalid workspace id ${JSON.stringify(id)}`);
      const stats = await fsp.stat(hostDir).catch(() => null);
      if (!stats?.isDirectory()) throw new Error(`--bind ${id}: ${hostDir} is not a directory`);
      registry.open.set(id, Workspace.open(id, hostDir, true));
    }
    await Promise.all(registry.open.values());
    return registry;
  }

  /** The workspace `id`; WORKSPACE_NOT_FOUND when there is none (never created by a typo). */
  async get(id: string): Promise<Workspace> {
    checkId(id);
    return this.open.get(id) ?? this.openManaged(id);
  }

  async create(id: string): Promise<Workspace> {
    checkId(id);
    if (this.bound.has(id)) fail("ALREADY_EXISTS", `workspace ${id} already exists (bound by the operator)`);
    try {
      await fsp.mkdir(this.hostDir(id), 0o755);
    } catch (error) {
      if (errnoOf(error) === "EEXIST") fail("ALREADY_EXISTS", `workspace ${id} already exists`);
      throw error;
    }
    return this.get(id);
  }

  /** Every workspace, sorted by id. */
  async list(): Promise<Workspace[]> {
    const managed = (await fsp.readdir(this.managedDir, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory() && WORKSPACE_ID_PATTERN.test(entry.name))
      .map((entry) => entry.name);
    const ids = [...new Set([...managed, ...this.bound])].sort();
    const found = await Promise.all(ids.map((id) => this.get(id).catch(() => null)));
    return found.filter((workspace): workspace is Workspace => workspace !== null);
  }

  /** Deletes a managed workspace and everything in it. */
  async delete(id: string): Promise<void> {
    const workspace = await this.get(id);
    if (workspace.bound) fail("WORKSPACE_BOUND", `workspace ${id} is bound by the operator and cannot be deleted`);
    this.open.delete(id);
    await workspace.clear();
    await workspace.close();
    await fsp.rmdir(this.hostDir(id));
  }

  /**
   * A fresh staging directory for workspace `id`: for a managed workspace a
   * sibling of its directory (DATA_DIR/workspaces/.staging-ID-TAG), so that a
   * restore swapping the directory meanwhile does not take it along; for a
   * bound one inside its root (temp-named: hidden, kept by an in-place
   * replace, swept at start-up). Either way on the workspace's file system.
   */
  async createStaging(id: string): Promise<Staging> {
    const workspace = await this.get(id);
    if (workspace.bound) return workspace.createStaging();
    const name = `.staging-${id}-${randomBytes(8).toString("hex")}`;
    await fsp.mkdir(path.join(this.managedDir, name), 0o700);
    const parent = Directory.open(this.managedDir, true);
    try {
      return new Staging(name, parent, Directory.open(at(parent, name)));
    } catch (error) {
      parent.close();
      throw error;
    }
  }

  /**
   * Replaces workspace `id` by the staging directory (made by
   * createStaging). A managed workspace's directory is swapped by renames
   * (staging → .swap, live → .old, .swap → live), which start-up recovery
   * completes or rolls back after a crash; a bound one is replaced in place.
   * `whileSyncing` runs beside the sync before a managed workspace's swap,
   * which renames only the staging directory itself: what it sees of the
   * staged tree (listStaged) is what the swap puts in place.
   */
  async replaceWithStaging(id: string, staging: Staging, whileSyncing?: () => Promise<void>): Promise<void> {
    const workspace = await this.get(id);
    if (workspace.bound) return workspace.replaceContentsInPlace(staging);
    const tag = randomBytes(8).toString("hex");
    const live = this.hostDir(id);
    const swap = path.join(this.managedDir, `.swap-${id}-${tag}`);
    const old = path.join(this.managedDir, `.old-${id}-${tag}`);
    await staging.release();
    // whileSyncing first: what it hands to worker threads is on its way before `sync` is spawned.
    await Promise.all([whileSyncing?.(), staging.sync()]);
    await fsp.rename(staging.procPath(), swap);
    await staging.handOver();
    await fsp.chmod(swap, 0o755);
    await fsp.rename(live, old);
    await fsp.rename(swap, live);
    // The swap is done (the restore's commit): nothing after it may fail the call. A failed open is retried
    // by the next get, and what is not removed now is removed at start-up.
    await syncDirectory(this.managedDir).catch(() => undefined);
    await this.openManaged(id).catch(() => undefined);
    // Calls still holding the old Workspace keep the descriptors they opened; new ones through it fail (CONTENT_CHANGED).
    await workspace.close();
    await fsp.rm(old, { recursive: true, force: true }).catch(() => undefined);
  }

  /** Removes temp files left by a crash in every workspace; returns how many. */
  async sweepTempFiles(): Promise<number> {
    let removed = 0;
    for (const workspace of await this.list()) removed += await workspace.sweepTempFiles();
    return removed;
  }

  async close(): Promise<void> {
    const all = await Promise.allSettled(this.open.values());
    this.open.clear();
    for (const result of all) if (result.status === "fulfilled") await result.value.close();
  }

  /** Opens the managed workspace `id` and caches it (replacing what was cached); a failed open is not cached. */
  private openManaged(id: string): Promise<Workspace> {
    const opening = Workspace.open(id, this.hostDir(id), false).catch((error: unknown) => {
      if (this.open.get(id) === opening) this.open.delete(id);
      if (errnoOf(error) === "ENOENT" || errnoOf(error) === "ENOTDIR") fail("WORKSPACE_NOT_FOUND", `workspace ${id} does not exist`);
      throw error;
    });
    this.open.set(id, opening);
    return opening;
  }

  private hostDir(id: string): string {
    return path.join(this.managedDir, id);
  }
}

function checkId(id: string): void {
  if (!WORKSPACE_ID_PATTERN.test(id)) {
    fail("INVALID_ARGUMENT", `invalid workspace id ${JSON.stringify(id.slice(0, 80))}: use 1-63 of a-z 0-9 . _ - starting with a letter or digit`);
  }
}

/** Containment resolves through /proc/self/fd; without it the daemon must not serve. */
async function assertProcFdWorks(dir: string): Promise<void> {
  const handle = await fsp.open(dir, "r");
  try {
    const seen = await fsp.readlink(`/proc/self/fd/${handle.fd}`).catch(() => null);
    if (seen !== (await fsp.realpath(dir))) {
      throw new Error("path containment needs /proc/self/fd (Linux with /proc mounted); refusing to start");
    }
  } finally {
    await handle.close();
  }
}

/** Completes or rolls back a swap a crash interrupted (see replaceWithStaging). */
async function recoverSwaps(managedDir: string): Promise<void> {
  for (const name of await fsp.readdir(managedDir)) {
    const old = /^\.old-(.+)-[0-9a-f]{16}$/.exec(name);
    if (old) {
      const live = path.join(managedDir, old[1]!);
      const exists = await fsp.lstat(live).then(() => true, () => false);
      if (exists) await fsp.rm(path.join(managedDir, name), { recursive: true, force: true });
      else await fsp.rename(path.join(managedDir, name), live);
    }
  }
  for (const name of await fsp.readdir(managedDir)) {
    if (/^\.(swap|staging)-.+-[0-9a-f]{16}$/.test(name)) await fsp.rm(path.join(managedDir, name), { recursive: true, force: true });
  }
}
