import { readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAll, setup } from "./daemon.js";

let d: Awaited<ReturnType<typeof setup>>;
beforeAll(async () => {
  d = await setup();
});
afterAll(() => d?.stop());

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)],
  );
}

describe("atomicity", () => {
  it("concurrent large Writes and Reads: every read sees one whole version", async () => {
    const versions = Array.from({ length: 12 }, (_, i) => `${String.fromCharCode(65 + i)}`.repeat(1024 * 1024 - 1) + "\n");
    await d.client.files.write({ workspace: d.ws, path: "race/f.txt", body: { case: "content", value: versions[0]! } });
    const writes = versions.map((v) => d.client.files.write({ workspace: d.ws, path: "race/f.txt", body: { case: "content", value: v } }));
    const reads = Array.from({ length: 24 }, () => readAll(d.client, { workspace: d.ws, path: "race/f.txt" }));
    await Promise.all(writes);
    for (const r of await Promise.all(reads)) {
      expect(versions.includes(r.text), "a read saw a mix of versions").toBe(true);
    }
  });

  it("leaves no temp files behind", () => {
    const leftovers = walk(d.root).filter((p) => path.basename(p).startsWith(".filetools-tmp-"));
    expect(leftovers).toEqual([]);
  });

  it("20 concurrent Edits of distinct tokens in one file are all applied", async () => {
    const tokens = Array.from({ length: 20 }, (_, i) => `T${i}`);
    await d.client.files.write({ workspace: d.ws, path: "race/edit.txt", body: { case: "content", value: tokens.map((t) => `<${t}>\n`).join("") } });
    await Promise.all(
      tokens.map((_, i) => d.client.files.edit({ workspace: d.ws, path: "race/edit.txt", edits: [{ oldText: `<T${i}>`, newText: `<D${i}>` }] })),
    );
    const text = (await readAll(d.client, { workspace: d.ws, path: "race/edit.txt" })).text;
    expect(text).toBe(tokens.map((_, i) => `<D${i}>\n`).join(""));
  });
});
