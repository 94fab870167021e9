// The journal of patches being applied, under DATA_DIR/patches: a patch's
// files change only after its record is durable (the commit point), and a
// daemon that died part-way finishes the change at its next start, before
// the start-up sweep would remove the staged files the record names. A
// record written only half (its .tmp) was never committed: dropped.
import { randomBytes } from "node:crypto";
import { promises as fsp } from "node:fs";
import path from "node:path";
import { z } from "zod";

const PatchRecordSchema = z.object({
  workspace: z.string(),
  /** New contents staged at the workspace root (temp names) and where each goes. */
  writes: z.array(z.object({ path: z.string(), staged: z.string() })),
  /** Paths removed after the writes (deleted files, the old paths of moved ones). */
  removes: z.array(z.string()),
});

export type PatchRecord = z.infer<typeof PatchRecordSchema>;

export class PatchJournal {
  constructor(private readonly dir: string) {}

  /** Makes `record` durable: from here on the change happens, now or at the next start. Returns its id, for done(). */
  async commit(record: PatchRecord): Promise<string> {
    await fsp.mkdir(this.dir, { recursive: true });
    const id = randomBytes(8).toString("hex");
    const temp = path.join(this.dir, `${id}.tmp`);
    const handle = await fsp.open(temp, "wx", 0o600);
    try {
      await handle.writeFile(JSON.stringify(record));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsp.rename(temp, path.join(this.dir, `${id}.json`));
    const dir = await fsp.open(this.dir, "r");
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
    return id;
  }

  /** The change of record `id` is whole: forget it. */
  async done(id: string): Promise<void> {
    await fsp.rm(path.join(this.dir, `${id}.json`), { force: true });
  }

  /** Records committed and not done (a record that does not parse is reported as undefined, to be dropped). */
  async pending(): Promise<Array<{ id: string; record: PatchRecord | undefined }>> {
    const names = await fsp.readdir(this.dir).catch(() => [] as string[]);
    const found: Array<{ id: string; record: PatchRecord | undefined }> = [];
    for (const name of names.sort()) {
      if (name.endsWith(".tmp")) await fsp.rm(path.join(this.dir, name), { force: true });
      if (!name.endsWith(".json")) continue;
      const text = await fsp.readFile(path.join(this.dir, name), "utf8");
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      const checked = PatchRecordSchema.safeParse(parsed);
      found.push({ id: name.slice(0, -".json".length), record: checked.success ? checked.data : undefined });
    }
    return found;
  }
}
