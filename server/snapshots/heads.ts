// The head of each workspace's main line: one small object per workspace
// (`.heads/<workspace>.json`) naming its newest published snapshot. Publishing
// is a compare-and-swap of it (If-Match on the ETag read; If-None-Match for
// the first), so "the run started from the newest" and "the run's snapshot
// becomes the newest" are one atomic step on the store, not a check followed
// by a write. A manifest the head never named (its publish was refused, or
// its daemon died before the swap) is off the main line.
//
// A store written before heads existed has none: its newest manifest is the
// head until the first publish creates the object.
import { z } from "zod";
import { fail } from "../errors.js";
import { parseRecord } from "../runs/records.js";
import { SNAPSHOT_ID } from "./manifest.js";
import type { ConditionalStore } from "./store.js";

const HeadSchema = z.object({
  snapshot: z.string().regex(SNAPSHOT_ID),
  runId: z.string(),
  node: z.string(),
  publishedAt: z.iso.datetime(),
});

/** The head as read: its snapshot and the ETag a swap must match; undefined when the workspace has no head object. */
export interface Head {
  snapshot: string;
  etag: string;
}

export class Heads {
  constructor(private readonly store: ConditionalStore) {}

  /** The workspace's head object; DATA_LOSS when it is damaged (nothing may publish over what it cannot read). */
  async read(workspaceId: string, signal?: AbortSignal): Promise<Head | undefined> {
    const current = await this.store.readWithTag(headKey(workspaceId), signal);
    if (!current) return undefined;
    const parsed = parseRecord(HeadSchema, current.text);
    if (!parsed.ok) fail("DATA_LOSS", `the head of workspace ${workspaceId} in the store is damaged (${parsed.problem}); an operator must repair or remove .heads/${workspaceId}.json`);
    return { snapshot: parsed.value.snapshot, etag: current.etag };
  }

  /**
   * Makes `snapshot` the head if the head is still `expected` (undefined: no
   * head object yet). Refused, the head is read again: a write that succeeded
   * but whose answer was lost (the SDK's retry then meets its own write and
   * gets 412) is a success; otherwise `moved` names the head now ("" for none).
   */
  async advance(workspaceId: string, expected: Head | undefined, next: { snapshot: string; runId: string; node: string }, signal?: AbortSignal): Promise<{ advanced: true } | { advanced: false; moved: string }> {
    const body = Buffer.from(JSON.stringify({ ...next, publishedAt: new Date().toISOString() }));
    const etag = expected ? await this.store.replaceIfMatch(headKey(workspaceId), body, expected.etag, signal) : await this.store.createIfAbsent(headKey(workspaceId), body, signal);
    if (etag !== undefined) return { advanced: true };
    const now = (await this.read(workspaceId))?.snapshot ?? "";
    return now === next.snapshot ? { advanced: true } : { advanced: false, moved: now };
  }
}

/** No workspace id starts with ".", so the key cannot meet a snapshot's keys. */
export function headKey(workspaceId: string): string {
  return `.heads/${workspaceId}.json`;
}
