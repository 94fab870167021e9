import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { NO_ACTOR, type ChangeNote } from "./records.js";
import { SegmentLog } from "./segments.js";

const dirs: string[] = [];
function freshDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "journal-segments-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const note = (i: number): ChangeNote => ({ kind: "created", path: `/f${i}`, from: "", type: "file", size: i, sha256: "", versionBefore: "", versionAfter: `v${i}` });
const entry = (i: number) => ({ time: new Date().toISOString(), ...note(i), ...NO_ACTOR, outside: false });

describe("SegmentLog", () => {
  it("numbers appends in order, also when they arrive together, and reads them back after a reopen", async () => {
    const dir = freshDir();
    const log = await SegmentLog.open(dir, { maxEntries: 1000, maxAgeMs: 60_000 });
    const together = await Promise.all(Array.from({ length: 20 }, (_, i) => log.append([entry(i), entry(100 + i)])));
    expect(together.flat().map((r) => r.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    await log.close();
    const again = await SegmentLog.open(dir, { maxEntries: 1000, maxAgeMs: 60_000 });
    expect(again.last).toBe(40);
    expect((await again.read(35, 10)).map((r) => r.path)).toEqual(["/f117", "/f18", "/f118", "/f19", "/f119"]);
    expect((await again.append([entry(7)]))[0]!.seq).toBe(41);
    await again.close();
  });

  it("cuts off a line torn by a crash, and goes on numbering after the last whole one", async () => {
    const dir = freshDir();
    const log = await SegmentLog.open(dir, { maxEntries: 1000, maxAgeMs: 60_000 });
    await log.append([entry(1), entry(2), entry(3)]);
    await log.close();
    const [segment] = readdirSync(dir);
    appendFileSync(path.join(dir, segment!), '{"seq":4,"time":"2026-');
    const warnings: unknown[] = [];
    const again = await SegmentLog.open(dir, { maxEntries: 1000, maxAgeMs: 60_000 }, { warn: (fields: unknown) => void warnings.push(fields) });
    expect(again.last).toBe(3);
    expect(readFileSync(path.join(dir, segment!), "utf8").endsWith("}\n")).toBe(true);
    expect(warnings).toHaveLength(1);
    expect((await again.append([entry(4)]))[0]!.seq).toBe(4);
    expect((await again.read(0, 100)).map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    await again.close();
  });

  it("keeps at least maxEntries, dropping whole segments past them, oldest first", async () => {
    const dir = freshDir();
    const log = await SegmentLog.open(dir, { maxEntries: 100, maxAgeMs: 60_000 }); // segments of 16 entries
    for (let i = 0; i < 500; i++) await log.append([entry(i)]);
    expect(log.last).toBe(500);
    expect(log.oldest).toBeGreaterThan(500 - 100 - 16);
    expect(log.oldest).toBeLessThanOrEqual(500 - 100 + 1);
    const held = await log.read(log.oldest - 1, 1000);
    expect(held[0]!.seq).toBe(log.oldest);
    expect(held.map((r) => r.seq)).toEqual(Array.from({ length: 500 - log.oldest + 1 }, (_, i) => log.oldest + i));
    expect(readdirSync(dir).length).toBeLessThanOrEqual(Math.ceil(116 / 16) + 1);
    await log.close();
  });

  it("refuses appends once closed, with a reason", async () => {
    const log = await SegmentLog.open(freshDir(), { maxEntries: 10, maxAgeMs: 60_000 });
    await log.close();
    await expect(log.append([entry(1)])).rejects.toMatchObject({ reason: "CANCELLED" });
  });
});
