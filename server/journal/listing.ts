// What the outside watcher last saw of a bound workspace's tree, kept beside
// its journal (DATA_DIR/journal/WORKSPACE/outside-listing.json) so that the
// next daemon can journal what changed while none was running: each path's
// version, type and size, and the journal's last cursor when that scan began
// (what the journal has after it was journaled while or after the scan ran).
// Read back as untrusted: a listing that does not parse is no listing.
import { randomBytes } from "node:crypto";
import { promises as fsp } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { parseRecord } from "../runs/records.js";
import type { EntryType } from "../workspace/entry.js";

export interface Seen {
  version: string;
  type: EntryType;
  size: number;
}

export interface Listing {
  cursor: number;
  entries: Map<string, Seen>;
}

const ListingSchema = z.object({
  cursor: z.int().nonnegative(),
  /** [path, version, type, size] */
  entries: z.array(z.tuple([z.string().startsWith("/"), z.string(), z.enum(["file", "directory", "symlink", "other"]), z.number().nonnegative()])),
});

/** The listing kept in `file`; undefined when there is none, or it is not a valid one. */
export async function readListing(file: string): Promise<Listing | undefined> {
  const text = await fsp.readFile(file, "utf8").catch(() => undefined);
  const parsed = text === undefined ? undefined : parseRecord(ListingSchema, text);
  if (!parsed?.ok) return undefined;
  return { cursor: parsed.value.cursor, entries: new Map(parsed.value.entries.map(([p, version, type, size]) => [p, { version, type, size }])) };
}

/** Replaces the listing in `file`, durably (a temp file synced, then renamed over it). */
export async function writeListing(file: string, listing: Listing): Promise<void> {
  const temp = path.join(path.dirname(file), `.listing-${randomBytes(6).toString("hex")}.tmp`);
  const entries = [...listing.entries].map(([p, seen]) => [p, seen.version, seen.type, seen.size]);
  try {
    const handle = await fsp.open(temp, "w", 0o600);
    try {
      await handle.writeFile(JSON.stringify({ cursor: listing.cursor, entries }));
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await fsp.rename(temp, file);
  } catch (error) {
    await fsp.rm(temp, { force: true });
    throw error;
  }
}
