import { readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FileToolsError } from "../../clients/ts/src/client.js";
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

  it("Reads racing Writes that replace the file: each answers one version whole, never PATH_ESCAPES", async () => {
    // Each Write renames a new file over the name, so the file a Read opened often loses its last link while it
    // is read; the Read opens the name again. Readers read on while one writer replaces the file back to back.
    // 1 MiB: read whole before the Read answers anything, so every replacement it meets is met in time to read the name again.
    const versions = Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(97 + i)}`.repeat(1024 * 1024 - 1) + "\n");
    const file = "race/replaced.txt";
    await d.client.files.write({ workspace: d.ws, path: file, body: { case: "content", value: versions[0]! } });
    let writing = true;
    const writer = (async () => {
      for (const v of versions) await d.client.files.write({ workspace: d.ws, path: file, body: { case: "content", value: v } });
      writing = false;
    })();
    const answers: string[] = [];
    const reader = async () => {
      while (writing) {
        answers.push(
          await readAll(d.client, { workspace: d.ws, path: file }).then(
            (r) => (versions.includes(r.text) ? "whole" : "mixed"),
            (error: FileToolsError) => error.reason,
          ),
        );
      }
    };
    await Promise.all([writer, ...Array.from({ length: 4 }, reader)]);
    expect(answers.filter((a) => a !== "whole")).toEqual([]);
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
