// Run leases across daemons that share an s3:// store. A run holds the lease
// object of its workspace (`.leases/<workspace>.json`): taken with a
// conditional create (If-None-Match: *) or, over an expired, released or
// abandoned lease, a conditional overwrite (If-Match); kept by conditional
// overwrites on its ETag every third of the TTL. Releasing overwrites it
// (If-Match) with a released lease and never deletes it: a delete without a
// condition could remove a lease another daemon took in between, and
// conditional deletes are not honoured by every S3-compatible server. S3
// itself is the arbiter; there is no other coordination service.
//
// What it guarantees: two daemons never both hold one workspace while a lease
// is live; a run that lost its lease (it expired while the daemon was cut
// off and another run took it, or an operator abandoned it) never publishes
// (checked by renewing just before the commit point, and the head's
// compare-and-swap catches a run that published meanwhile); a daemon that
// restarts resumes a run only while the lease still names that run.
import { z } from "zod";
import { fail, FileToolsError } from "../errors.js";
import type { Logger } from "../log.js";
import type { LeaseMetrics } from "../metrics/metrics.js";
import type { Store } from "../snapshots/store.js";
import { parseRecord } from "./records.js";

const LeaseSchema = z.object({
  runId: z.string(),
  /** The node holding it (--node-name), for operators, logs and messages. */
  holder: z.string(),
  /** ISO 8601: past it, another daemon may take the lease over. */
  expiresAt: z.iso.datetime(),
  /** When the run started (absent in leases of older daemons). */
  startedAt: z.iso.datetime().optional(),
  /** "held" (absent in older leases), or ended: "released" by its run, "abandoned" by an operator. */
  state: z.enum(["held", "released", "abandoned"]).default("held"),
});

type Lease = z.infer<typeof LeaseSchema>;

/** A workspace's lease as an operator sees it. */
export interface LeaseInfo {
  workspace: string;
  runId: string;
  holder: string;
  startedAt?: string;
  expiresAt: string;
  /** Held and not expired: no other run may start. */
  live: boolean;
}

interface Held {
  runId: string;
  startedAt: string;
  etag: string;
  timer: NodeJS.Timeout;
  /** Why the lease is no longer ours, once it is not. */
  lost?: string;
  /** The renewal under way: one at a time, as each is conditional on the ETag the one before got. */
  renewing?: Promise<void>;
}

export class Leases {
  private readonly held = new Map<string, Held>();

  constructor(
    private readonly store: Store,
    private readonly ttlMs: number,
    /** This daemon, in the leases it writes (--node-name). */
    readonly holder: string,
    private readonly logger?: Pick<Logger, "warn" | "error">,
    private readonly metrics?: LeaseMetrics,
  ) {}

  /**
   * Takes the lease of `workspace` for run `runId`: RUN_ACTIVE (with the
   * holder's run, node and when its lease expires) while another run holds a
   * live one.
   */
  async acquire(workspace: string, runId: string, startedAt: string, signal?: AbortSignal): Promise<void> {
    const key = leaseKey(workspace);
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        const created = await this.store.createIfAbsent(key, this.body(runId, startedAt), signal);
        if (created !== undefined) return this.hold(workspace, runId, startedAt, created, "acquired");
        const current = await this.read(workspace, signal);
        if (!current) continue;
        const { lease } = current;
        if (lease && isLive(lease) && lease.runId !== runId) {
          this.metrics?.lease("acquire", "refused");
          fail("RUN_ACTIVE", `workspace ${workspace} is leased to run ${lease.runId} on node ${lease.holder} until ${lease.expiresAt}`, {
            run_id: lease.runId,
            node: lease.holder,
            lease_expires_at: lease.expiresAt,
          });
        }
        // Released, abandoned, expired or damaged: take it, unless someone else just did.
        const taken = await this.store.replaceIfMatch(key, this.body(runId, startedAt), current.etag, signal);
        const takenOver = lease !== undefined && lease.state === "held" && lease.runId !== runId;
        if (taken !== undefined) return this.hold(workspace, runId, startedAt, taken, takenOver ? "taken_over" : "acquired");
      }
    } catch (error) {
      if (!(error instanceof FileToolsError && error.reason === "RUN_ACTIVE")) this.metrics?.lease("acquire", "error");
      throw error;
    }
    this.metrics?.lease("acquire", "refused");
    fail("RUN_ACTIVE", `workspace ${workspace}'s lease keeps changing hands; retry`);
  }

  /**
   * Takes the lease again for a run this daemon left active before a
   * restart, only if the lease still names that run and nobody ended it:
   * false when another run took it over or an operator abandoned it.
   */
  async resume(workspace: string, runId: string, startedAt: string): Promise<boolean> {
    const key = leaseKey(workspace);
    const current = await this.read(workspace);
    const lease = current?.lease;
    if (!current || !lease || lease.runId !== runId || lease.state !== "held") {
      this.metrics?.lease("resume", "refused");
      return false;
    }
    const taken = await this.store.replaceIfMatch(key, this.body(runId, startedAt), current.etag);
    if (taken === undefined) {
      this.metrics?.lease("resume", "refused");
      return false;
    }
    this.hold(workspace, runId, startedAt, taken, "resumed");
    return true;
  }

  /**
   * Renews the lease now; RUN_ACTIVE when run `runId` no longer holds it (so
   * it must not publish).
   */
  async confirm(workspace: string, runId: string, signal?: AbortSignal): Promise<void> {
    const held = this.held.get(workspace);
    if (!held || held.runId !== runId) fail("RUN_ACTIVE", `run ${runId} does not hold the lease of workspace ${workspace}: it may not publish a snapshot`);
    if (!held.lost) await this.renew(workspace, held, { signal, strict: true });
    if (held.lost) fail("RUN_ACTIVE", `run ${runId} lost the lease of workspace ${workspace} (${held.lost}): it may not publish a snapshot; another run may have taken the workspace over`);
  }

  /** Gives up the lease of run `runId` (finished, or the daemon is stopping); a lease lost or taken over is left alone. */
  async release(workspace: string, runId: string): Promise<void> {
    const held = this.held.get(workspace);
    if (!held || held.runId !== runId) return;
    clearInterval(held.timer);
    this.held.delete(workspace);
    // A renewal under way would move the ETag under the release, which would then find the lease changed and leave it held.
    await held.renewing?.catch(() => undefined);
    if (held.lost) return;
    // Only if it is still ours (If-Match); overwritten as released, never deleted (see the file comment).
    const released = await this.store.replaceIfMatch(leaseKey(workspace), this.body(runId, held.startedAt, "released"), held.etag).catch(() => null);
    this.metrics?.lease("release", released === null ? "error" : released === undefined ? "refused" : "ok");
  }

  /**
   * Ends another daemon's hold on `workspace` (an operator's AbandonRun): its
   * lease, if held by `runId` (any run when ""), becomes abandoned. The
   * lease it ended, or undefined when none was held.
   */
  async abandon(workspace: string, runId: string, signal?: AbortSignal): Promise<LeaseInfo | undefined> {
    const key = leaseKey(workspace);
    for (let attempt = 0; attempt < 3; attempt++) {
      const current = await this.read(workspace, signal);
      const lease = current?.lease;
      if (!current || !lease || lease.state !== "held" || (runId !== "" && lease.runId !== runId)) return undefined;
      const ended: Lease = { ...lease, state: "abandoned", expiresAt: new Date().toISOString() };
      if ((await this.store.replaceIfMatch(key, Buffer.from(JSON.stringify(ended)), current.etag, signal)) !== undefined) {
        this.metrics?.lease("abandon", "ok");
        return infoOf(workspace, lease);
      }
    }
    fail("RUN_ACTIVE", `workspace ${workspace}'s lease keeps changing hands; retry`);
  }

  /** The lease of `workspace` as stored, or undefined when there is none (or it is damaged). */
  async describe(workspace: string, signal?: AbortSignal): Promise<LeaseInfo | undefined> {
    const lease = (await this.read(workspace, signal))?.lease;
    return lease ? infoOf(workspace, lease) : undefined;
  }

  /** Every live lease on the store: the fleet's active runs. */
  async listLive(signal?: AbortSignal): Promise<LeaseInfo[]> {
    const keys = await this.store.list(".leases/", signal);
    const workspaces = keys.filter((k) => k.endsWith(".json")).map((k) => k.slice(".leases/".length, -".json".length));
    const infos = await Promise.all(workspaces.map((w) => this.describe(w, signal).catch(() => undefined)));
    return infos.filter((info): info is LeaseInfo => info?.live === true);
  }

  /** Whether this daemon holds (and has not lost) the lease of `workspace` for `runId`. */
  holds(workspace: string, runId: string): boolean {
    const held = this.held.get(workspace);
    return held !== undefined && held.runId === runId && !held.lost;
  }

  /** Leases this daemon holds (lost ones included until their run ends). */
  get count(): number {
    return this.held.size;
  }

  /**
   * Stops renewing (graceful shutdown): the leases stay as they are, so the
   * runs that stay active keep their workspaces for the TTL, and the daemon
   * that restarts resumes them.
   */
  stopRenewing(): void {
    for (const held of this.held.values()) clearInterval(held.timer);
    this.held.clear();
  }

  private hold(workspace: string, runId: string, startedAt: string, etag: string, how: "acquired" | "taken_over" | "resumed"): void {
    this.metrics?.lease(how === "resumed" ? "resume" : "acquire", how === "taken_over" ? "taken_over" : "ok");
    const previous = this.held.get(workspace);
    if (previous) clearInterval(previous.timer);
    const held: Held = { runId, startedAt, etag, timer: setInterval(() => void this.renew(workspace, held, { strict: false }), this.ttlMs / 3) };
    held.timer.unref();
    this.held.set(workspace, held);
  }

  /**
   * One renewal; `strict` (a run about to publish): a store that cannot be
   * reached fails it rather than waiting for the next tick. Renewals of a
   * lease run one after another: two sent with the same ETag would see each
   * other's write as the lease changing hands. A tick that finds one under
   * way leaves it at that one.
   */
  private async renew(workspace: string, held: Held, options: { signal?: AbortSignal; strict: boolean }): Promise<void> {
    if (!options.strict && held.renewing) return;
    while (held.renewing) await held.renewing.catch(() => undefined);
    const renewing = this.renewOnce(workspace, held, options);
    held.renewing = renewing;
    try {
      await renewing;
    } finally {
      if (held.renewing === renewing) held.renewing = undefined;
    }
  }

  private async renewOnce(workspace: string, held: Held, options: { signal?: AbortSignal; strict: boolean }): Promise<void> {
    if (held.lost) return;
    try {
      const body = this.body(held.runId, held.startedAt);
      const etag = (await this.store.replaceIfMatch(leaseKey(workspace), body, held.etag, options.signal)) ?? (await this.stillOurs(workspace, held, body, options.signal));
      if (etag !== undefined) {
        held.etag = etag;
        this.metrics?.lease("renew", "ok");
        return;
      }
      held.lost = "the lease object changed: it expired and another run took it, or an operator abandoned the run";
      clearInterval(held.timer);
      this.metrics?.lease("renew", "lost");
      this.logger?.error({ workspace, run_id: held.runId }, "run lease lost: the run may not publish");
    } catch (error) {
      // The store is unreachable: try again at the next tick; past the TTL another daemon may take the lease.
      this.metrics?.lease("renew", "error");
      this.logger?.warn({ workspace, run_id: held.runId, err: error }, "run lease not renewed");
      if (options.strict) throw error;
    }
  }

  /** The lease object of `workspace` as stored: its ETag, and the lease (undefined when damaged); undefined when there is none. */
  private async read(workspace: string, signal?: AbortSignal): Promise<{ etag: string; text: string; lease: Lease | undefined } | undefined> {
    const current = await this.store.readWithTag(leaseKey(workspace), signal);
    return current && { ...current, lease: parseLease(current.text) };
  }

  /**
   * After a 412: the ETag of a lease that still names this run as held by
   * this node — a renewal whose answer was lost (the SDK's retry then meets
   * its own write, or the next tick an ETag it never learnt) — renewed with
   * `body`; undefined when it names another run or was ended. Nobody else
   * writes a lease that names this run and holder: taking one over, or
   * abandoning it, changes its run or its state.
   */
  private async stillOurs(workspace: string, held: Held, body: Buffer, signal?: AbortSignal): Promise<string | undefined> {
    const current = await this.read(workspace, signal);
    const lease = current?.lease;
    if (!current || !lease || lease.runId !== held.runId || lease.holder !== this.holder || lease.state !== "held" || lease.startedAt !== held.startedAt) return undefined;
    return current.text === body.toString() ? current.etag : this.store.replaceIfMatch(leaseKey(workspace), body, current.etag, signal);
  }

  private body(runId: string, startedAt: string, state: Lease["state"] = "held"): Buffer {
    const expiresAt = new Date(Date.now() + (state === "held" ? this.ttlMs : 0)).toISOString();
    const lease: Lease = { runId, holder: this.holder, startedAt, expiresAt, state };
    return Buffer.from(JSON.stringify(lease));
  }
}

function isLive(lease: Lease): boolean {
  return lease.state === "held" && Date.parse(lease.expiresAt) > Date.now();
}

function infoOf(workspace: string, lease: Lease): LeaseInfo {
  return { workspace, runId: lease.runId, holder: lease.holder, startedAt: lease.startedAt, expiresAt: lease.expiresAt, live: isLive(lease) };
}

/** The lease object's key: no workspace id starts with ".", so it cannot meet a snapshot's keys. */
function leaseKey(workspace: string): string {
  return `.leases/${workspace}.json`;
}

function parseLease(text: string): Lease | undefined {
  const parsed = parseRecord(LeaseSchema, text);
  return parsed.ok ? parsed.value : undefined;
}
