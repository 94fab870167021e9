// Run leases across daemons that share an s3:// store. A run holds the lease
// object of its workspace (`.leases/<workspace>.json`): taken with a
// conditional create (If-None-Match: *), kept by conditional overwrites on its
// ETag (If-Match) every third of the TTL, taken over only once it has
// expired, and deleted when the run finishes or the daemon shuts down. S3
// itself is the arbiter; there is no other coordination service.
//
// What it guarantees: two daemons never both start a run on one workspace
// while a lease is live, and a run that lost its lease (it expired while the
// daemon was cut off, and another run took it) never publishes: it checks,
// by renewing, just before its snapshot's commit point. What it does not: a
// daemon paused longer than the TTL between that check and the manifest
// write (milliseconds) could still publish once more — the snapshot's parent
// check (Snapshots.create) then catches the common case of a newer snapshot.
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { fail } from "../errors.js";
import type { Logger } from "../log.js";
import type { ConditionalStore } from "../snapshots/store.js";
import { parseRecord } from "./records.js";

const LeaseSchema = z.object({
  runId: z.string(),
  /** The daemon holding it (random per process), for logs and messages. */
  holder: z.string(),
  /** ISO 8601: past it, another daemon may take the lease over. */
  expiresAt: z.iso.datetime(),
});

type Lease = z.infer<typeof LeaseSchema>;

interface Held {
  runId: string;
  etag: string;
  timer: NodeJS.Timeout;
  /** Why the lease is no longer ours, once it is not. */
  lost?: string;
}

export class Leases {
  /** This daemon, in the leases it writes. */
  readonly holder = `daemon-${randomBytes(6).toString("hex")}`;
  private readonly held = new Map<string, Held>();

  constructor(
    private readonly store: ConditionalStore,
    private readonly ttlMs: number,
    private readonly logger?: Pick<Logger, "warn" | "error">,
  ) {}

  /**
   * Takes the lease of `workspace` for run `runId`: RUN_ACTIVE (with the
   * holder's run and when its lease expires) while another run holds a live
   * one. Resuming a run whose lease this daemon left behind is taking it again.
   */
  async acquire(workspace: string, runId: string, signal?: AbortSignal): Promise<void> {
    const key = leaseKey(workspace);
    for (let attempt = 0; attempt < 3; attempt++) {
      const created = await this.store.createIfAbsent(key, this.body(runId), signal);
      if (created !== undefined) return this.hold(workspace, runId, created);
      const current = await this.store.readWithTag(key, signal);
      if (!current) continue; // released meanwhile: create again
      const lease = parseLease(current.text);
      if (lease && lease.runId !== runId && Date.parse(lease.expiresAt) > Date.now()) {
        fail("RUN_ACTIVE", `workspace ${workspace} is leased to run ${lease.runId} of another daemon until ${lease.expiresAt}`, {
          run_id: lease.runId,
          lease_expires_at: lease.expiresAt,
        });
      }
      // Expired, ours from before a restart, or damaged: take it over, unless someone else just did.
      const taken = await this.store.replaceIfMatch(key, this.body(runId), current.etag, signal);
      if (taken !== undefined) return this.hold(workspace, runId, taken);
    }
    fail("RUN_ACTIVE", `workspace ${workspace}'s lease keeps changing hands; retry`);
  }

  /**
   * Renews the lease now; FAILED_PRECONDITION / RUN_ACTIVE when run `runId`
   * no longer holds it (so it must not publish). A run without a lease here
   * (it started before leases, or on another store) passes.
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
    if (held.lost) return;
    // Only if it is still ours: an expiry written by nobody else (If-Match), then the delete.
    const expired = await this.store.replaceIfMatch(leaseKey(workspace), this.body(runId, 0), held.etag).catch(() => undefined);
    if (expired !== undefined) await this.store.delete(leaseKey(workspace)).catch(() => undefined);
  }

  /** Leases this daemon holds (lost ones included until their run ends). */
  get count(): number {
    return this.held.size;
  }

  /** Releases every lease (graceful shutdown). */
  async releaseAll(): Promise<void> {
    await Promise.all([...this.held].map(([workspace, held]) => this.release(workspace, held.runId)));
  }

  private hold(workspace: string, runId: string, etag: string): void {
    const previous = this.held.get(workspace);
    if (previous) clearInterval(previous.timer);
    const held: Held = { runId, etag, timer: setInterval(() => void this.renew(workspace, held, { strict: false }), this.ttlMs / 3) };
    held.timer.unref();
    this.held.set(workspace, held);
  }

  /** One renewal; `strict` (a run about to publish): a store that cannot be reached fails it rather than waiting for the next tick. */
  private async renew(workspace: string, held: Held, options: { signal?: AbortSignal; strict: boolean }): Promise<void> {
    if (held.lost) return;
    try {
      const etag = await this.store.replaceIfMatch(leaseKey(workspace), this.body(held.runId), held.etag, options.signal);
      if (etag !== undefined) {
        held.etag = etag;
        return;
      }
      held.lost = "the lease object changed: it expired and another run took it";
      clearInterval(held.timer);
      this.logger?.error({ workspace, run_id: held.runId }, "run lease lost: the run may not publish");
    } catch (error) {
      // The store is unreachable: try again at the next tick; past the TTL another daemon may take the lease.
      this.logger?.warn({ workspace, run_id: held.runId, err: error }, "run lease not renewed");
      if (options.strict) throw error;
    }
  }

  private body(runId: string, ttlMs = this.ttlMs): Buffer {
    const lease: Lease = { runId, holder: this.holder, expiresAt: new Date(Date.now() + ttlMs).toISOString() };
    return Buffer.from(JSON.stringify(lease));
  }
}

/** The lease object's key: no workspace id starts with ".", so it cannot meet a snapshot's keys. */
function leaseKey(workspace: string): string {
  return `.leases/${workspace}.json`;
}

function parseLease(text: string): Lease | undefined {
  const parsed = parseRecord(LeaseSchema, text);
  return parsed.ok ? parsed.value : undefined;
}
