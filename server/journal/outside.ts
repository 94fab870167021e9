// Changes made behind the daemon's back in a bound workspace, journaled as
// `outside`. The kernel's notifications (workspace/outside.ts) say which
// paths to look at; a stat of each says what is there now. Where
// notifications are unavailable, or once they fail (a queue overflow), the
// tree is stat-scanned every --outside-scan-ms instead, and watchers are told.
// What changed while no daemon ran is found at start: the tree against the
// listing the last daemon kept (listing.ts), less what its journal has since.
//
// Notifications can also miss changes without a word: @parcel/watcher drops
// the kernel's queue-overflow event (a burst of more than
// fs.inotify.max_queued_events), and a write through a hard link from
// outside the workspace is told only to that link's directory. So, with
// notifications, the tree is also scanned every --outside-verify-ms (at
// least 50 times as long as the last scan took), soon after a burst of events,
// and soon after the daemon moved, deleted or replaced a tree (what it did
// there hides changes under it from the comparison spanning it); what differs
// from the scan before and is not what the journal has is journaled then,
// late, and watchers are told once. A path the journal has changed while a
// scan ran is left to the next one (the scan may have seen it half done).
//
// The daemon's own changes raise notifications too. They are told apart by
// what the journal has just recorded for the path (its version after the
// change, or its deletion, or a directory moved or deleted whole): events are
// looked at only after a short settling time, so that the daemon's append
// (made before its call answers) is in by then; a look that met one of the
// daemon's changes under way is taken again later, as what it saw may be that
// change, its record not in yet. A file the daemon wrote through a link is
// told apart by its version, which the journal has under the link's path. A
// change made from outside to a path the daemon changed within that window,
// leaving the very version the daemon recorded, cannot be told apart (it
// changed nothing then).
import { FileToolsError } from "../errors.js";
import type { Logger } from "../log.js";
import type { Entry } from "../workspace/entry.js";
import type { OutsideEvent, OutsideSubscription } from "../workspace/outside.js";
import { displayPath, type Components } from "../workspace/paths.js";
import type { Workspace } from "../workspace/workspace.js";
import type { Journal } from "./journal.js";
import { readListing, writeListing, type Seen } from "./listing.js";
import { NO_ACTOR, type ChangeNote, type JournalRecord, type JournalType } from "./records.js";

export type OutsideMode = "notify" | "scan" | "off";

export interface OutsideOptions {
  mode: OutsideMode;
  /** The stat scan's interval (ms). */
  scanMs: number;
  /** With notifications: the verifying scan's interval (ms); 0 = none. */
  verifyMs: number;
  logger?: Pick<Logger, "warn" | "info">;
}

/** How long events settle before they are looked at. */
export const SETTLE_MS = 100;
/** How long what the daemon did to a path (or a tree) is remembered to tell its own notifications apart. */
const REMEMBER_MS = 10_000;
/** Paths known before what is older than REMEMBER_MS is forgotten. */
const KNOWN_KEPT = 100_000;
/** How many times a look that met the daemon's own change under way is tried again (each after SETTLE_MS). */
const MAX_DEFERRALS = 50;
/** A batch of this many events may have come with an overflow: the tree is verified soon after. */
const BURST_EVENTS = 512;
/** How long after a burst (or a tree the daemon changed whole) the verifying scan runs, at the soonest. */
const SOON_MS = 1_000;
/** @parcel/watcher holds events up to 500 ms while more keep coming: a verifying scan compares only once they are in. */
const DELIVERY_MS = 500;
/** Verifying scans run at least this many times as long as the last scan took apart: every verifyMs, and after a burst. */
const VERIFY_DUTY = 50;
const BURST_DUTY = 10;

/** A scan of the whole tree: path → version, type and size; and the journal's appends remembered when it began (Known.seq). */
interface Scan {
  tree: Map<string, Seen>;
  startedSeq: number;
}

interface Known {
  /** "" when absent. */
  version: string;
  type: JournalType;
  at: number;
  /** Which of the journal's appends told it (1, 2, …): before or after a scan began, exactly. */
  seq: number;
}

export class OutsideChanges {
  private subscription: OutsideSubscription | undefined;
  private scanTimer: NodeJS.Timeout | undefined;
  /** The last state seen of each path, from the journal (the daemon's changes and the outside ones). */
  private readonly known = new Map<string, Known>();
  /** Directories the daemon moved or deleted whole (their old and new prefixes), with when and which append told them: the last REMEMBER_MS, and since the last scan began. */
  private trees: Array<{ prefix: string; at: number; seq: number }> = [];
  private pending: OutsideEvent[] = [];
  private settleTimer: NodeJS.Timeout | undefined;
  /** One look at a time, in order. */
  private chain: Promise<void> = Promise.resolve();
  /** Set once the scan has taken over from notifications. */
  private scanning = false;
  /** The last scan, the next one is compared with (undefined until one succeeds). */
  private scanned: Scan | undefined;
  /** How long the last scan took (ms): the verifying scan's interval is at least VERIFY_DUTY times that. */
  private scanMs = 0;
  private verifyTimer: NodeJS.Timeout | undefined;
  /** When the verifying scan's timer fires (Date.now()). */
  private verifyDue = 0;
  /** Appends of the journal remembered so far (Known.seq). */
  private appends = 0;
  /** Past this many known paths, the old are forgotten. */
  private forgetAbove = KNOWN_KEPT;
  /**
   * Versions of the files the daemon's own changes left, or deleted or moved
   * away (`gone`), by version (a version names one inode's state): a change
   * through a link is journaled by the path it was asked by, and notified at
   * the path it landed at.
   */
  private readonly ownVersions = new Map<string, { at: number; seq: number; gone: boolean }>();
  /** Paths looked at while the daemon was changing the tree, and how many times (look). */
  private readonly deferred = new Map<string, number>();
  /** Paths the notifications named since the last verifying scan: what the next finds there was told, not missed. */
  private namedSinceScan = new Set<string>();
  /** Whether watchers were told that notifications missed changes. */
  private toldMissed = false;
  /** Set as the last listing is made: no verifying scan from then on. */
  private closing = false;
  private closed = false;

  constructor(
    private readonly journal: Journal,
    private readonly workspace: Workspace,
    private readonly options: OutsideOptions,
  ) {}

  /**
   * Journals what changed while no daemon ran, then starts watching (or
   * scanning); never fails: without notifications, it scans; without a
   * listing from the last daemon, watchers are told what it could not see.
   */
  async start(): Promise<void> {
    this.journal.onAppend((workspaceId, records) => {
      if (workspaceId === this.workspace.id) this.remember(records);
    });
    if (this.options.mode === "off") return;
    // First in the chain: the notifications' first looks wait for it.
    this.chain = this.catchUp().catch((error: unknown) => {
      this.options.logger?.warn({ workspace: this.workspace.id, err: error }, "outside catch-up failed");
      // Never a host path in what watchers are told: the workspace's own errors name workspace paths only.
      this.cannotTell(`its tree could not be read (${error instanceof FileToolsError ? error.message : "see the daemon's log"})`);
    });
    if (this.options.mode === "notify") {
      try {
        this.subscription = await this.workspace.watchOutside(
          (events) => this.queue(events),
          (error) => this.fallBack(`the kernel's notifications failed (${error.message})`),
        );
        this.verifyIn(this.options.verifyMs);
      } catch (error) {
        this.fallBack(`the kernel's notifications are unavailable (${(error as Error).message})`);
      }
    } else {
      this.fallBack("--outside-watch is scan");
    }
    await this.chain;
  }

  /** Keeps the listing the next start compares with, then stops. */
  async close(): Promise<void> {
    this.closing = true; // no verifying scan from now on
    clearTimeout(this.verifyTimer);
    if (this.options.mode !== "off" && !this.closed) {
      await this.keepListing().catch((error: unknown) => this.options.logger?.warn({ workspace: this.workspace.id, err: error }, "outside listing not kept"));
    }
    this.closed = true;
    clearTimeout(this.settleTimer);
    clearTimeout(this.scanTimer);
    await this.subscription?.close().catch(() => undefined);
    this.subscription = undefined;
    await this.chain;
  }

  /** The tree now against the last daemon's listing: what differs, and is not what the journal has since, changed while no daemon ran. */
  private async catchUp(): Promise<void> {
    const file = await this.journal.listingFile(this.workspace.id);
    const kept = await readListing(file);
    const { last } = await this.journal.bounds(this.workspace.id);
    if (kept) {
      this.remember(await this.journal.read(this.workspace.id, kept.cursor, Number.MAX_SAFE_INTEGER));
      // A tree the daemon moved or deleted is no reason to pass over what is under it now: better told twice than missed.
      this.trees = [];
    } else if (last > 0) this.cannotTell("the last daemon kept no listing of its tree");
    const now = await this.scan();
    // What the journal has since the cursor is known: nothing to look for in it (none of it is since `before` began).
    if (kept) await this.journalDifferences({ tree: kept.entries, startedSeq: Infinity }, now);
    // The next scan's baseline: while scanning, and to verify notifications (without, trees would be kept since it).
    if (this.scanning || this.options.verifyMs > 0) this.scanned = now;
    // Not kept (a full disk): the next start compares with the older listing, whose cursor is older too.
    await writeListing(file, { cursor: last, entries: now.tree }).catch((error: unknown) => this.options.logger?.warn({ workspace: this.workspace.id, err: error }, "outside listing not kept"));
  }

  /**
   * For the next start: the journal's cursor, then the tree, then what was
   * pending looked at (journaled after the cursor, so not told twice).
   */
  private async keepListing(): Promise<void> {
    await this.chain;
    clearTimeout(this.scanTimer); // no scan of the timer's meanwhile: this one is the last
    const cursor = (await this.journal.bounds(this.workspace.id)).last;
    const now = await this.scan();
    await this.subscription?.close().catch(() => undefined);
    this.subscription = undefined;
    clearTimeout(this.settleTimer);
    this.settleTimer = undefined;
    await this.look(this.pending.splice(0));
    // Not told as missed: what is in flight as the daemon stops may be among it.
    if (this.scanned) await this.journalDifferences(this.scanned, now);
    await writeListing(await this.journal.listingFile(this.workspace.id), { cursor, entries: now.tree });
  }

  private cannotTell(why: string): void {
    const message = `what changed in workspace ${this.workspace.id} while no daemon ran could not be determined: ${why}`;
    this.options.logger?.warn({ workspace: this.workspace.id }, message);
    this.journal.setCondition(this.workspace.id, message);
  }

  private remember(records: readonly JournalRecord[]): void {
    const now = Date.now();
    const seq = ++this.appends;
    for (const record of records) {
      const gone = record.kind === "deleted";
      if (record.kind !== "replaced") this.known.set(record.path, { version: gone ? "" : record.versionAfter, type: gone ? "" : record.type, at: now, seq });
      if (record.kind === "moved") this.known.set(record.from, { version: "", type: "", at: now, seq });
      if (!record.outside && record.type !== "directory") {
        if (record.versionAfter !== "") this.ownVersions.set(record.versionAfter, { at: now, seq, gone: false });
        if ((record.kind === "deleted" || record.kind === "moved") && record.versionBefore !== "") this.ownVersions.set(record.versionBefore, { at: now, seq, gone: true });
      }
      if (!record.outside && record.type === "directory" && (record.kind === "moved" || record.kind === "deleted" || record.kind === "replaced")) {
        // By the paths asked and, through a link to a directory, those where the kernel tells of the tree.
        const paths = [record.path, record.from, record.landed?.path ?? "", record.landed?.from ?? ""];
        for (const path of new Set(paths.filter((p) => p !== ""))) this.trees.push({ prefix: treePrefix(path), at: now, seq });
        this.verifySoon();
      }
    }
    if (this.known.size > this.forgetAbove || this.ownVersions.size > this.forgetAbove) {
      this.forgetOld(now);
      this.forgetAbove = Math.max(KNOWN_KEPT, 2 * Math.max(this.known.size, this.ownVersions.size)); // amortized: not a pass over them all per append
    }
  }

  /** Forgets paths and trees older than REMEMBER_MS, but not what was journaled since the last scan began (the next scan is told apart from the journal by it). */
  private forgetOld(now: number): void {
    for (const [path, known] of this.known) if (!this.stillNeeded(known, now)) this.known.delete(path);
    for (const [version, own] of this.ownVersions) if (!this.stillNeeded(own, now)) this.ownVersions.delete(version);
    this.forgetOldTrees(now);
  }

  private forgetOldTrees(now: number): void {
    this.trees = this.trees.filter((tree) => this.stillNeeded(tree, now));
  }

  private stillNeeded(told: { at: number; seq: number }, now: number): boolean {
    return now - told.at <= REMEMBER_MS || told.seq > (this.scanned?.startedSeq ?? Infinity);
  }

  private queue(events: OutsideEvent[]): void {
    this.pending.push(...events);
    if (this.options.verifyMs > 0) for (const event of events) this.namedSinceScan.add(displayPath(event.parts));
    if (events.length >= BURST_EVENTS) this.verifySoon();
    this.lookSoon();
  }

  /** Looks at what is pending once it has settled. */
  private lookSoon(): void {
    this.settleTimer ??= setTimeout(() => {
      this.settleTimer = undefined;
      const batch = this.pending.splice(0);
      this.chain = this.chain.then(() => this.look(batch)).catch((error: unknown) => this.options.logger?.warn({ workspace: this.workspace.id, err: error }, "outside changes not journaled"));
    }, SETTLE_MS);
  }

  /**
   * Stats each path an event names, and journals what differs from what the
   * journal knows. What a stat saw while one of the daemon's own changes was
   * under way (or its record not in yet) may be that change (a file
   * rewritten many times a second, a directory made on a call's way): looked
   * at again after another settling, until a stat meets none (at most
   * MAX_DEFERRALS times; then it is journaled as it is). A directory made
   * from outside is walked once it is told, for what was made in it.
   */
  private async look(events: OutsideEvent[]): Promise<void> {
    if (this.closed) return;
    const now = Date.now();
    this.forgetOldTrees(now);
    const trees = this.trees.filter((tree) => now - tree.at <= REMEMBER_MS);
    const notes: ChangeNote[] = [];
    const again: OutsideEvent[] = [];
    const looked = new Set<string>();
    for (const event of events) {
      const path = displayPath(event.parts);
      if (looked.has(path) || trees.some((tree) => underTree(path, tree.prefix))) {
        this.deferred.delete(path);
        continue;
      }
      looked.add(path);
      // Quiet: no change of the daemon's own under way, nor begun, nor unrecorded, while the stat was taken.
      const mark = this.workspace.quietMark();
      const entry = await this.workspace.stat(event.parts).catch(() => null);
      const quiet = mark !== undefined && this.workspace.quietMark() === mark;
      const found = this.differs(event, path, entry);
      const deferred = this.deferred.get(path) ?? 0;
      if (found && !quiet && !this.closing && deferred < MAX_DEFERRALS) {
        this.deferred.set(path, deferred + 1);
        again.push(event);
        continue;
      }
      this.deferred.delete(path);
      if (!found) continue;
      notes.push(found);
      if (found.kind === "made-directory") notes.push(...(await this.madeInside(event.parts, looked)));
    }
    if (notes.length > 0 && !this.closed) await this.journal.append(this.workspace.id, notes, NO_ACTOR, true);
    if (again.length > 0 && !this.closed) {
      this.pending.push(...again);
      this.lookSoon();
    }
  }

  /** What `entry` (the path's stat now, null when gone) is and the journal does not have: a note to journal as outside, or undefined. */
  private differs(event: OutsideEvent, path: string, entry: Entry | null): ChangeNote | undefined {
    const known = this.known.get(path);
    if (!entry) {
      if (known && this.ownVersions.get(known.version)?.gone) return undefined; // deleted or moved away by the daemon, by another path
      if (known?.version !== "" && (known !== undefined || event.type === "delete")) return outsideNote("deleted", path, known?.type ?? "", 0, known?.version ?? "", "");
      return undefined;
    }
    if (known?.version === entry.version) return undefined;
    const own = this.ownVersions.get(entry.version);
    if (own && !own.gone) {
      // Written by the daemon by another path: this path's state is that change's.
      this.known.set(path, { version: entry.version, type: entry.type, at: own.at, seq: own.seq });
      return undefined;
    }
    if (entry.type === "directory") {
      if (known && known.version !== "") return undefined; // a directory's own times change with its entries: not a change of its own
      return outsideNote("made-directory", path, "directory", 0, "", entry.version);
    }
    const kind = known === undefined ? (event.type === "create" ? "created" : "modified") : known.version === "" ? "created" : "modified";
    return outsideNote(kind, path, entry.type, Number(entry.size), known?.version ?? "", entry.version);
  }

  /** What was made inside a directory made from outside before the kernel watched it, as outside notes. */
  private async madeInside(parts: Components, looked: Set<string>): Promise<ChangeNote[]> {
    const notes: ChangeNote[] = [];
    for await (const child of this.workspace.walk(parts, { recursive: true, maxDepth: 64, includeHidden: true, respectGitignore: false })) {
      const childPath = displayPath(child.parts);
      if (this.known.get(childPath)?.version === child.version) continue;
      looked.add(childPath);
      this.deferred.delete(childPath);
      notes.push(outsideNote(child.type === "directory" ? "made-directory" : "created", childPath, child.type, child.type === "directory" ? 0 : Number(child.size), "", child.version));
    }
    return notes;
  }

  /** Notifications are unavailable or failed: scan from now on (the first scan is the baseline), and say so. */
  private fallBack(why: string): void {
    if (this.closed || this.scanning) return;
    this.scanning = true;
    void this.subscription?.close().catch(() => undefined);
    this.subscription = undefined;
    const message = `${why}: outside changes to workspace ${this.workspace.id} are found by a stat scan every ${this.options.scanMs} ms from now on`;
    this.options.logger?.warn({ workspace: this.workspace.id }, message);
    this.journal.setCondition(this.workspace.id, message);
    // The baseline now, then a scan every scanMs after the last one ended (a failed one is logged and tried again).
    const scanThenWait = () => {
      this.chain = this.chain
        .then(async () => void (await this.rescan()))
        .catch((error: unknown) => this.options.logger?.warn({ workspace: this.workspace.id, err: error }, "outside scan failed"))
        .finally(() => {
          if (!this.closed) this.scanTimer = setTimeout(scanThenWait, this.options.scanMs);
        });
    };
    scanThenWait();
  }

  private async scan(): Promise<Scan> {
    const started = Date.now();
    const startedSeq = this.appends;
    const tree = new Map<string, Seen>();
    for await (const entry of this.workspace.walk([] as Components, { recursive: true, maxDepth: 1024, includeHidden: true, respectGitignore: false })) {
      tree.set(displayPath(entry.parts), { version: entry.version, type: entry.type, size: entry.type === "file" ? Number(entry.size) : 0 });
    }
    this.scanMs = Date.now() - started;
    return { tree, startedSeq };
  }

  /** A scan compared with the last one (or, the first time, the baseline), `waitMs` after it; what differs is journaled, and returned. */
  private async rescan(waitMs = SETTLE_MS): Promise<ChangeNote[]> {
    if (this.closed) return [];
    if (!this.scanned) {
      this.scanned = await this.scan(); // the baseline (until one succeeds, nothing is compared)
      return [];
    }
    const now = await this.scan();
    // What the daemon itself was changing while the scan ran is in the journal once it settles.
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    const journaled = await this.journalDifferences(this.scanned, now);
    this.scanned = now;
    return journaled;
  }

  /** After a burst, or a tree the daemon changed whole. */
  private verifySoon(): void {
    this.verifyIn(Math.max(SOON_MS, BURST_DUTY * this.scanMs));
  }

  /** The verifying scan in `ms`, unless one is due sooner; then the next, verifyMs later (at the soonest). */
  private verifyIn(ms: number): void {
    if (this.options.verifyMs === 0 || this.closing || this.scanning || !this.subscription) return;
    const due = Date.now() + ms;
    if (this.verifyTimer && this.verifyDue <= due) return;
    clearTimeout(this.verifyTimer);
    this.verifyDue = due;
    this.verifyTimer = setTimeout(() => {
      this.verifyTimer = undefined;
      this.chain = this.chain
        .then(async () => {
          if (this.scanning || this.closing) return;
          const journaled = await this.rescan(DELIVERY_MS + SETTLE_MS);
          // What events named since the last verifying scan was told (its look may not have come yet), not missed.
          this.toldLate(journaled.filter((note) => !this.namedSinceScan.has(note.path)));
          this.namedSinceScan = new Set();
        })
        .catch((error: unknown) => this.options.logger?.warn({ workspace: this.workspace.id, err: error }, "verifying scan failed"))
        .finally(() => this.verifyIn(Math.max(this.options.verifyMs, VERIFY_DUTY * this.scanMs)));
    }, ms);
  }

  /** Changes a scan found that the notifications had not told: logged, and watchers told once. */
  private toldLate(missed: readonly ChangeNote[]): void {
    const changes = missed.length;
    if (changes === 0 || this.scanning || this.options.mode !== "notify") return;
    const message = `the kernel's notifications missed ${changes} changes to workspace ${this.workspace.id} (a queue overflow, or a write through a hard link from outside it): a scan found them, and they are journaled late`;
    this.options.logger?.warn({ workspace: this.workspace.id, changes }, message);
    if (this.toldMissed) return;
    this.toldMissed = true;
    this.journal.setCondition(this.workspace.id, message);
  }

  /**
   * Journals what differs between two scans, but for what the journal already has (or the daemon moved or deleted
   * whole); a path journaled after `before` began and before `now` did, that is in neither, as deleted too. Returns
   * what was journaled. A path under a directory the journal has as deleted went with it (no note of its own).
   */
  private async journalDifferences(before: Scan, scan: Scan): Promise<ChangeNote[]> {
    const now = scan.tree;
    const notes: ChangeNote[] = [];
    this.forgetOldTrees(Date.now());
    const prefixes = new Set(this.trees.map((tree) => tree.prefix));
    // Under a tree the daemon changed whole since `before` began, or journaled while `scan` ran (the next scan tells).
    const own = (path: string) => treePrefixesOf(path).some((prefix) => prefixes.has(prefix)) || (this.known.get(path)?.seq ?? 0) > scan.startedSeq;
    for (const [path, { version, type, size }] of now) {
      const was = before.tree.get(path);
      if (was?.version === version || this.known.get(path)?.version === version || this.ownVersions.get(version)?.gone === false || own(path)) continue;
      // A directory's own times change with its entries: not a change of its own, where it was (or is journaled as) there.
      const known = this.known.get(path);
      if (type === "directory" && (was || (known && known.version !== ""))) continue;
      const kind = type === "directory" ? "made-directory" : was ? "modified" : "created";
      notes.push(outsideNote(kind, path, type, size, was?.version ?? "", version));
    }
    for (const [path, was] of before.tree) {
      if (now.has(path) || this.known.get(path)?.version === "" || this.ownVersions.get(was.version)?.gone || own(path) || this.goneWithParent(path, now)) continue;
      notes.push(outsideNote("deleted", path, was.type, 0, was.version, ""));
    }
    // Journaled since `before` began, in neither scan: gone since. Only where the walk lists it by that path (its
    // parent a directory the scan has: a path journaled through a link to a directory is listed by the target's).
    for (const [path, known] of this.known) {
      if (known.version === "" || known.seq <= before.startedSeq || now.has(path) || before.tree.has(path) || own(path) || this.goneWithParent(path, now)) continue;
      const parent = path.slice(0, path.lastIndexOf("/"));
      if (parent !== "" && now.get(parent)?.type !== "directory") continue;
      notes.push(outsideNote("deleted", path, known.type, 0, known.version, ""));
    }
    if (notes.length > 0 && !this.closed) await this.journal.append(this.workspace.id, notes, NO_ACTOR, true);
    return notes;
  }

  /** Whether a directory above the path is deleted, as the journal last had it, and not there now. */
  private goneWithParent(path: string, now: ReadonlyMap<string, Seen>): boolean {
    for (let end = path.lastIndexOf("/"); end > 0; end = path.lastIndexOf("/", end - 1)) {
      const parent = path.slice(0, end);
      if (this.known.get(parent)?.version === "" && !now.has(parent)) return true;
    }
    return false;
  }
}

/** "/a/" for the tree at /a, "/" for the root's. */
function treePrefix(path: string): string {
  return path === "/" ? "/" : `${path}/`;
}

/** The path is the tree's root or inside it. */
function underTree(path: string, prefix: string): boolean {
  return `${path}/`.startsWith(prefix);
}

/** The prefixes (treePrefix) of the trees a path is in: "/", "/a/", "/a/b/" for /a/b. */
function treePrefixesOf(path: string): string[] {
  const prefixes = ["/"];
  for (let end = path.indexOf("/", 1); end !== -1; end = path.indexOf("/", end + 1)) prefixes.push(path.slice(0, end + 1));
  if (path !== "/") prefixes.push(`${path}/`);
  return prefixes;
}

function outsideNote(kind: ChangeNote["kind"], path: string, type: JournalType, size: number, versionBefore: string, versionAfter: string): ChangeNote {
  return { kind, path, from: "", type, size, sha256: "", versionBefore, versionAfter };
}
