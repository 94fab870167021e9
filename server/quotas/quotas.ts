// Per-workspace quotas on bytes and entries (--quota-bytes, --quota-files, and
// per token in the tokens file). Usage is counted once per workspace (a walk,
// the first time a call needs it), then kept by each mutation's delta. A
// mutation reserves what it would add before it writes and settles with what
// it did, so two calls racing for the last bytes cannot both pass.
import { fail } from "../errors.js";
import type { Workspace } from "../workspace/workspace.js";
import { addUsage, negateUsage, NO_USAGE, type Admission, type Usage, type UsageGate } from "../workspace/usage.js";

/** Limits of one call; 0 is no limit. */
export interface QuotaLimits {
  bytes: number;
  files: number;
}

/** A token's limits: a field it sets replaces the daemon's (0 included: no limit); one it leaves out keeps the daemon's. */
export type QuotaOverride = Partial<QuotaLimits>;

/** One workspace's counted usage and what calls in flight hold of it. */
class Ledger {
  /** Positive parts of the admissions not yet settled. */
  private held: Usage = NO_USAGE;
  /** Replaced by a new count (a recount): no longer the workspace's. */
  stale = false;

  constructor(private usage: Usage) {}

  current(): Usage {
    return this.usage;
  }

  admit(delta: Usage, limits: QuotaLimits, shown: string): Admission {
    this.check(delta, limits, shown);
    let holding = positive(delta);
    this.held = addUsage(this.held, holding);
    let settled = false;
    return {
      resize: (next) => {
        if (settled) return;
        this.held = addUsage(this.held, negateUsage(holding));
        holding = NO_USAGE;
        // A refused call is failing: what it held is let go at once, so that a racing call can still fit.
        this.check(next, limits, shown);
        holding = positive(next);
        this.held = addUsage(this.held, holding);
      },
      settle: (actual) => {
        if (settled) return;
        settled = true;
        this.held = addUsage(this.held, negateUsage(holding));
        this.usage = addUsage(this.usage, actual);
      },
    };
  }

  /** A delta that adds to a dimension must fit beside the usage and what others hold; one that adds nothing always passes. */
  private check(delta: Usage, limits: QuotaLimits, shown: string): void {
    const bytesOver = limits.bytes > 0 && delta.bytes > 0 && this.usage.bytes + this.held.bytes + delta.bytes > limits.bytes;
    const filesOver = limits.files > 0 && delta.entries > 0 && this.usage.entries + this.held.entries + delta.entries > limits.files;
    if (!bytesOver && !filesOver) return;
    const what = bytesOver
      ? `the workspace's quota is ${limits.bytes} bytes, ${this.usage.bytes} are used and this would add ${delta.bytes}`
      : `the workspace's quota is ${limits.files} entries (files, directories, links), ${this.usage.entries} are used and this would add ${delta.entries}`;
    fail("QUOTA_EXCEEDED", `${shown}: ${what}; delete or shrink files first`, {
      usage_bytes: String(this.usage.bytes),
      limit_bytes: String(limits.bytes),
      usage_files: String(this.usage.entries),
      limit_files: String(limits.files),
      added_bytes: String(delta.bytes),
      added_files: String(delta.entries),
      ...(this.held.bytes > 0 || this.held.entries > 0 ? { reserved_bytes: String(this.held.bytes), reserved_files: String(this.held.entries) } : {}),
    });
  }
}

export class Quotas {
  /** Keyed by the Workspace object: a workspace deleted, re-created or swapped by a restore starts a new count. */
  private readonly ledgers = new WeakMap<Workspace, Promise<Ledger>>();
  /** The counts made, for the usage gauge (weakly: a workspace deleted or swapped drops out). */
  private readonly counted = new Set<WeakRef<Ledger>>();

  constructor(readonly defaults: QuotaLimits) {}

  /** The limits a call works under: its token's where set, else the daemon's. */
  limitsFor(override: QuotaOverride | undefined): QuotaLimits {
    return { bytes: override?.bytes ?? this.defaults.bytes, files: override?.files ?? this.defaults.files };
  }

  /**
   * The gate a mutation of `workspace` passes under the limits of its call
   * (its token's `override`, else the daemon's); undefined when
   * there is neither a limit nor a count to keep (nothing to pay for).
   */
  async gate(workspace: Workspace, override: QuotaOverride | undefined): Promise<UsageGate | undefined> {
    const limits = this.limitsFor(override);
    if (limits.bytes === 0 && limits.files === 0 && !this.ledgers.has(workspace)) return undefined;
    const ledger = await this.ledgerOf(workspace);
    return {
      admit: (delta, shown) => ledger.admit(delta, limits, shown),
      current: () => ledger.current(),
      recount: () => this.recount(workspace),
    };
  }

  /** Drops the count of workspace `workspace` (its tree was replaced or merged into wholesale): the next call under a quota walks it again. */
  recount(workspace: Workspace): void {
    const stale = this.ledgers.get(workspace);
    this.ledgers.delete(workspace);
    void stale?.then((ledger) => (ledger.stale = true), () => undefined);
  }

  /**
   * The fullest workspace counted, as a fraction of the daemon's limits (0
   * where it sets none), for the metrics: labels never name workspaces.
   */
  fullest(): { bytes: number; files: number } {
    const fullest = { bytes: 0, files: 0 };
    for (const ref of this.counted) {
      const ledger = ref.deref();
      if (!ledger || ledger.stale) {
        this.counted.delete(ref);
        continue;
      }
      const usage = ledger.current();
      if (this.defaults.bytes > 0) fullest.bytes = Math.max(fullest.bytes, usage.bytes / this.defaults.bytes);
      if (this.defaults.files > 0) fullest.files = Math.max(fullest.files, usage.entries / this.defaults.files);
    }
    return fullest;
  }

  private ledgerOf(workspace: Workspace): Promise<Ledger> {
    let ledger = this.ledgers.get(workspace);
    if (!ledger) {
      ledger = workspace.measure().then((usage) => {
        const counted = new Ledger(usage);
        this.counted.add(new WeakRef(counted));
        return counted;
      });
      // A count that failed (a directory it could not read) is tried again by the next call.
      ledger.catch(() => {
        if (this.ledgers.get(workspace) === ledger) this.ledgers.delete(workspace);
      });
      this.ledgers.set(workspace, ledger);
    }
    return ledger;
  }
}

function positive(delta: Usage): Usage {
  return { bytes: Math.max(0, delta.bytes), entries: Math.max(0, delta.entries) };
}
