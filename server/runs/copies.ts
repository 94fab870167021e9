// What each workspace on this daemon is a copy of. A workspace is a copy of a
// snapshot in the store; the record (DATA_DIR/copies/<workspace>.json,
// written atomically) names that snapshot, the tree's fingerprint when the
// copy was that snapshot exactly, and the run whose changes it may hold
// since. Comparing fingerprints tells whether the copy is still the snapshot
// or the snapshot plus changes never published (the daemon's own, a crashed
// run's, or made behind its back in a bound directory).
import { randomBytes } from "node:crypto";
import { promises as fsp } from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { Logger } from "../log.js";
import { listTree, type ListedTree } from "../workspace/fingerprint.js";
import type { Workspace } from "../workspace/workspace.js";
import { parseRecord } from "./records.js";

const CopySchema = z.object({
  /** The snapshot the copy was made of, or last published as ("" for none); null: unknown. */
  snapshot: z.string().nullable(),
  /** The tree's fingerprint when it was exactly that snapshot ("" when unknown). */
  fingerprint: z.string(),
  /** The last run started on the copy since (its unpublished changes belong to it), "" for none. */
  run: z.string().default(""),
  /** A restore began replacing the tree and did not record its end: what the tree holds belongs to nobody. */
  replacing: z.boolean().default(false),
});

type CopyRecord = z.infer<typeof CopySchema>;

/** A workspace's copy as it is now. */
export interface CopyState {
  /** The snapshot it is a copy of; undefined when unknown (a tree with no record: older daemon, or files put there by hand). */
  snapshot: string | undefined;
  /** It differs from that snapshot. */
  changed: boolean;
  /** The run its changes belong to ("" for none or unknown). */
  run: string;
  /** The walk that told `changed`: the tree's fingerprint now, and its entries (a restore that follows plans from them). */
  tree: ListedTree;
}

export class Copies {
  private constructor(
    private readonly dir: string,
    private readonly logger?: Pick<Logger, "warn">,
  ) {}

  static async load(dataDir: string, logger?: Pick<Logger, "warn">): Promise<Copies> {
    const dir = path.join(dataDir, "copies");
    await fsp.mkdir(dir, { recursive: true });
    return new Copies(dir, logger);
  }

  /** What `workspace` is a copy of now, and whether it changed since (a walk of the tree: stat only). */
  async state(workspace: Workspace, signal?: AbortSignal): Promise<CopyState> {
    const record = await this.read(workspace.id);
    const tree = await listTree(workspace, signal);
    // Part-way through a restore (a crash): no one's work, a copy of nothing.
    if (record?.replacing) return { snapshot: "", changed: false, run: "", tree };
    if (record?.snapshot != null) return { snapshot: record.snapshot, changed: tree.fingerprint !== record.fingerprint, run: record.run, tree };
    // Unknown: an empty tree is a copy of nothing; anything else is of unknown origin.
    const run = record?.run ?? "";
    return tree.listing.length === 0 ? { snapshot: "", changed: false, run, tree } : { snapshot: undefined, changed: true, run, tree };
  }

  /** The copy is exactly `snapshot` as of `fingerprint` (taken before the snapshot was packed or after it was restored). */
  async record(workspaceId: string, snapshot: string, fingerprint: string): Promise<void> {
    await this.write(workspaceId, { snapshot, fingerprint, run: "", replacing: false });
  }

  /** A restore is about to replace the tree (until the next record). */
  async replacing(workspaceId: string): Promise<void> {
    await this.write(workspaceId, { snapshot: "", fingerprint: "", run: "", replacing: true });
  }

  /** Run `runId` starts on the copy: changes from now on are its own. */
  async startRun(workspaceId: string, runId: string): Promise<void> {
    const record = await this.read(workspaceId);
    await this.write(workspaceId, { ...(record ?? { snapshot: null, fingerprint: "", replacing: false }), run: runId });
  }

  /** Forgets a deleted workspace's copy. */
  async forget(workspaceId: string): Promise<void> {
    await fsp.unlink(this.pathOf(workspaceId)).catch(() => undefined);
  }

  private async read(workspaceId: string): Promise<CopyRecord | undefined> {
    let text: string;
    try {
      text = await fsp.readFile(this.pathOf(workspaceId), "utf8");
    } catch {
      return undefined;
    }
    const parsed = parseRecord(CopySchema, text);
    if (parsed.ok) return parsed.value;
    // Treated as unknown origin: the copy is compared with the store's newest before anything is replaced.
    this.logger?.warn({ workspace: workspaceId, problem: parsed.problem }, "copy record left out");
    return undefined;
  }

  private async write(workspaceId: string, record: CopyRecord): Promise<void> {
    const target = this.pathOf(workspaceId);
    const temp = `${target}.tmp-${randomBytes(8).toString("hex")}`;
    await fsp.writeFile(temp, JSON.stringify(record));
    await fsp.rename(temp, target);
  }

  private pathOf(workspaceId: string): string {
    return path.join(this.dir, `${workspaceId}.json`);
  }
}
