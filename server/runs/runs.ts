// Runs and their change sets (SPEC section 1). Each run is a small JSON file
// (written atomically) plus an append-only JSON-lines change set, under
// DATA_DIR/runs, so an active run and its changes survive a daemon restart.
import { randomBytes } from "node:crypto";
import { promises as fsp } from "node:fs";
import path from "node:path";
import { fail } from "../errors.js";
import type { Logger } from "../log.js";
import type { Change } from "../tools/changes.js";
import { ChangeSchema, parseRecord, RunInfoSchema } from "./records.js";

export interface RunInfo {
  id: string;
  workspace: string;
  /** ISO 8601. */
  startedAt: string;
  restoredFrom: string;
  /** The snapshot the run started from, then its own latest (see RunInfoSchema). */
  base?: string;
  /** The head its next snapshot must replace (see RunInfoSchema). */
  follows?: string;
  node?: string;
  endReason?: string;
  labels: Record<string, string>;
  state: "active" | "finished";
  finishedAt?: string;
  snapshotId?: string;
}

export interface ChangeSummary {
  created: number;
  modified: number;
  deleted: number;
  moved: number;
}

const RUN_ID = /^run-[0-9]{8}T[0-9]{9}Z-[0-9a-f]{8}$/;
const RUN_RECORD = /^run-[0-9]{8}T[0-9]{9}Z-[0-9a-f]{8}\.json$/;

export class RunManager {
  /** Active runs by workspace. */
  private readonly active = new Map<string, RunInfo>();
  /** Workspaces whose StartRun is in progress. */
  private readonly starting = new Set<string>();
  /** Per-run append queue, so entries land in order. */
  private readonly queues = new Map<string, Promise<void>>();

  private constructor(
    private readonly dir: string,
    private readonly logger?: Pick<Logger, "warn">,
  ) {}

  /**
   * Reads the run records under DATA_DIR/runs. A record that is not a valid
   * run (torn, edited, from another program) is left out with a warning: the
   * daemon starts, and that run is as if it never ran here.
   */
  static async load(dataDir: string, logger?: Pick<Logger, "warn">): Promise<RunManager> {
    const dir = path.join(dataDir, "runs");
    await fsp.mkdir(dir, { recursive: true });
    const manager = new RunManager(dir, logger);
    for (const name of await fsp.readdir(dir)) {
      if (!RUN_RECORD.test(name)) continue;
      const info = await manager.readRun(name.slice(0, -".json".length));
      if (info?.state === "active") manager.active.set(info.workspace, info);
    }
    return manager;
  }

  isRecording(workspaceId: string): boolean {
    return this.active.has(workspaceId);
  }

  /** Appends a change to the active run's change set (none active: nothing), in order. */
  async record(workspaceId: string, change: Omit<Change, "time">): Promise<void> {
    const run = this.active.get(workspaceId);
    if (!run) return;
    const line = JSON.stringify({ ...change, time: new Date().toISOString() }) + "\n";
    const previous = this.queues.get(run.id) ?? Promise.resolve();
    const next = previous.then(() => appendWhole(this.changesPath(run.id), line));
    this.queues.set(run.id, next.catch(() => undefined));
    await next;
  }

  activeRun(workspaceId: string): RunInfo | undefined {
    return this.active.get(workspaceId);
  }

  activeRuns(): RunInfo[] {
    return [...this.active.values()];
  }

  /**
   * Reserves the workspace for a new run (RUN_ACTIVE when one is active or
   * starting); `begin` then does the restore and returns the run's details.
   */
  async start(
    workspaceId: string,
    labels: Record<string, string>,
    node: string,
    begin: (runId: string, startedAt: string) => Promise<{ restoredFrom: string; base: string; follows: string }>,
  ): Promise<RunInfo> {
    const current = this.active.get(workspaceId);
    if (current) fail("RUN_ACTIVE", `workspace ${workspaceId} already has an active run (${current.id})`, { run_id: current.id });
    if (this.starting.has(workspaceId)) fail("RUN_ACTIVE", `a run is starting on workspace ${workspaceId}`);
    this.starting.add(workspaceId);
    try {
      const now = new Date();
      const stamp = now.toISOString().replace(/[-:]/g, "").replace(".", "");
      const id = `run-${stamp}-${randomBytes(4).toString("hex")}`;
      const { restoredFrom, base, follows } = await begin(id, now.toISOString());
      const run: RunInfo = {
        id,
        workspace: workspaceId,
        startedAt: now.toISOString(),
        restoredFrom,
        base,
        follows,
        node,
        labels: { ...labels },
        state: "active",
      };
      await fsp.writeFile(this.changesPath(run.id), "");
      await this.save(run);
      this.active.set(workspaceId, run);
      return run;
    } finally {
      this.starting.delete(workspaceId);
    }
  }

  /** The active run `runId` of the workspace; NOT_FOUND / FAILED_PRECONDITION otherwise. */
  requireActive(workspaceId: string, runId: string): RunInfo {
    const run = this.active.get(workspaceId);
    if (!run || (runId !== "" && run.id !== runId)) {
      fail("NOT_FOUND", `run ${runId || "(none)"} is not the active run of workspace ${workspaceId}`);
    }
    return run;
  }

  /** The run published `snapshotId` and stays active (a shutdown snapshot): its next snapshot follows that one. */
  async advanceBase(run: RunInfo, snapshotId: string): Promise<void> {
    const advanced: RunInfo = { ...run, base: snapshotId, follows: snapshotId };
    await this.save(advanced);
    if (this.active.get(run.workspace)?.id === run.id) this.active.set(run.workspace, advanced);
  }

  /** Marks the run finished (after its snapshot, if any, was written); `endReason` when it ended without its FinishRun. */
  async finish(run: RunInfo, snapshotId: string, endReason?: string): Promise<void> {
    await this.queues.get(run.id);
    const done: RunInfo = { ...run, state: "finished", finishedAt: new Date().toISOString(), snapshotId, ...(endReason ? { endReason } : {}) };
    await this.save(done);
    if (this.active.get(run.workspace)?.id === run.id) this.active.delete(run.workspace);
    this.queues.delete(run.id);
  }

  /** A run known locally (active or finished), or undefined. */
  async find(runId: string): Promise<RunInfo | undefined> {
    return RUN_ID.test(runId) ? this.readRun(runId) : undefined;
  }

  /** The change set of a run known locally. */
  async changes(runId: string): Promise<Change[]> {
    await this.queues.get(runId);
    const text = await fsp.readFile(this.changesPath(runId), "utf8").catch(() => "");
    // A line torn by a crash is the last one; it is dropped, as is any other line that is not a valid change (with a warning).
    const lines = text.split("\n").filter((line) => line.trim() !== "");
    return lines.flatMap((line, index) => {
      const parsed = parseRecord(ChangeSchema, line);
      if (parsed.ok) return [parsed.value];
      if (index < lines.length - 1 || text.endsWith("\n")) this.logger?.warn({ run_id: runId, line: index + 1, problem: parsed.problem }, "change set entry left out");
      return [];
    });
  }

  /** The run record `runId`, or undefined when there is none or it is not a valid one (with a warning). */
  private async readRun(runId: string): Promise<RunInfo | undefined> {
    let text: string;
    try {
      text = await fsp.readFile(this.runPath(runId), "utf8");
    } catch {
      return undefined;
    }
    const parsed = parseRecord(RunInfoSchema, text);
    if (parsed.ok && parsed.value.id === runId) return parsed.value;
    this.logger?.warn({ run_id: runId, problem: parsed.ok ? "the record names another run" : parsed.problem }, "run record left out");
    return undefined;
  }

  /** Forgets the local records of a workspace's runs (DeleteWorkspace). */
  async forgetWorkspace(workspaceId: string): Promise<void> {
    this.active.delete(workspaceId);
  }

  private async save(run: RunInfo): Promise<void> {
    const target = this.runPath(run.id);
    const temp = `${target}.tmp-${randomBytes(8).toString("hex")}`;
    await fsp.writeFile(temp, JSON.stringify(run, null, 2));
    await fsp.rename(temp, target);
  }

  private runPath(runId: string): string {
    return path.join(this.dir, `${runId}.json`);
  }

  private changesPath(runId: string): string {
    return path.join(this.dir, `${runId}.changes.jsonl`);
  }
}

/** Appends `line`, or cuts the file back to what it held: an append made again after a full disk is not glued to a torn line. */
async function appendWhole(file: string, line: string): Promise<void> {
  const handle = await fsp.open(file, "a");
  try {
    const { size } = await handle.stat();
    try {
      await handle.writeFile(line);
    } catch (error) {
      await handle.truncate(size).catch(() => undefined);
      throw error;
    }
  } finally {
    await handle.close();
  }
}

export function summarize(changes: readonly Change[]): ChangeSummary {
  const summary: ChangeSummary = { created: 0, modified: 0, deleted: 0, moved: 0 };
  for (const change of changes) {
    if (change.kind === "create") summary.created++;
    else if (change.kind === "modify") summary.modified++;
    else if (change.kind === "delete") summary.deleted++;
    else if (change.kind === "move") summary.moved++;
  }
  return summary;
}
