// The line index through a real daemon: deep windows of a large file, total_lines
// once known, and fresh content after a Write.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAll, setup } from "./daemon.js";

let d: Awaited<ReturnType<typeof setup>>;
beforeAll(async () => {
  d = await setup();
});
afterAll(() => d?.stop());

const LINES = 1_000_000;
const lineOf = (n: number, tag: string) => `${tag} ${n} ${"é€".repeat(n % 7)}${"-".repeat(30)}\r\n`;

describe("Read over the line index", () => {
  const reference: string[] = [];
  beforeAll(() => {
    for (let n = 1; n <= LINES; n++) reference.push(lineOf(n, "old"));
    writeFileSync(path.join(d.root, "big.log"), reference.join("")); // about 50 MB
  });

  const window = (from: number, count: number, lines = reference) => lines.slice(from - 1, from - 1 + count).join("");

  it("tail_lines of a large file not yet counted: read from the end only, numbered from the end, total_lines unknown", async () => {
    const tail = await readAll(d.client, { workspace: d.ws, path: "big.log", tailLines: 3n });
    expect(tail.text).toBe(window(LINES - 2, 3));
    expect(tail.header.totalLines).toBeUndefined();
    expect(tail.chunks[0]!.firstLine).toBe(-3n);
    expect(tail.trailer).toMatchObject({ linesReturned: 3n, nextLine: 0n, eof: true });
    expect(tail.trailer.totalLines).toBeUndefined();
  });

  it("a deep window of a ~50 MB file equals the reference, first and later reads", async () => {
    const first = await readAll(d.client, { workspace: d.ws, path: "big.log", startLine: 900_000n, lineCount: 50n });
    expect(first.text).toBe(window(900_000, 50));
    expect(first.trailer.nextLine).toBe(900_050n);
    for (const start of [123_457, 899_999, 1, 654_321, 999_990]) {
      const later = await readAll(d.client, { workspace: d.ws, path: "big.log", startLine: BigInt(start), lineCount: 20n });
      expect(later.text, `window at ${start}`).toBe(window(start, 20));
    }
  });

  it("reports total_lines in the header once the end has been reached", async () => {
    const stat = await d.client.files.stat({ workspace: d.ws, path: "big.log", countLines: true });
    expect(stat.file?.lineCount).toBe(BigInt(LINES));
    const later = await readAll(d.client, { workspace: d.ws, path: "big.log", startLine: 500_000n, lineCount: 3n });
    expect(later.header.totalLines).toBe(BigInt(LINES));
    const tail = await readAll(d.client, { workspace: d.ws, path: "big.log", tailLines: 2n });
    expect(tail.text).toBe(window(LINES - 1, 2));
    expect(tail.chunks[0]!.firstLine).toBe(BigInt(LINES - 1));
  });

  it("after a Write the same window reflects the new content", async () => {
    const fresh: string[] = [];
    for (let n = 1; n <= 100_000; n++) fresh.push(lineOf(n, "new"));
    await d.client.files.write({ workspace: d.ws, path: "big.log", body: { case: "content", value: fresh.join("") } });
    const after = await readAll(d.client, { workspace: d.ws, path: "big.log", startLine: 90_000n, lineCount: 10n });
    expect(after.text).toBe(window(90_000, 10, fresh));
    const past = await readAll(d.client, { workspace: d.ws, path: "big.log", startLine: 900_000n, lineCount: 10n });
    expect(past.text).toBe("");
    expect(past.trailer.eof).toBe(true);
    expect(past.trailer.totalLines).toBe(100_000n);
  });
});
