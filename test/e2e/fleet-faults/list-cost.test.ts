// One FinishRun's store reads stay bounded however many recovered snapshots
// pile up: prune walks the main line from the head, and only when there is
// something to prune, never every manifest.
import { mkdtempSync, readFileSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startDaemon, type Daemon } from "../daemon.js";

const daemons: Daemon[] = [];
afterAll(async () => {
  for (const d of daemons) await d.stop().catch(() => undefined);
});

async function gets(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("filetools_store_operations_total") && l.includes('operation="get"') && l.includes('outcome="ok"'));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

describe("listing cost", () => {
  it("one FinishRun's store reads stay bounded as recovered snapshots pile up", async () => {
    const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-faults-cost-")));
    const port = 20000 + Math.floor(Math.random() * 20000);
    const d = await startDaemon({ args: ["--store", `file://${dir}`, "--keep-snapshots", "3", "--metrics-listen", `127.0.0.1:${port}`] });
    daemons.push(d);
    const ws = "w";
    const files = 1000;
    const finishOnce = async (i: number) => {
      const run = (await d.client.workspaces.startRun({ workspace: ws })).run!;
      await d.client.files.write({ workspace: ws, path: `/run-${i}.txt`, body: { case: "content", value: `${i}\n` } });
      const before = await gets(port);
      const t = performance.now();
      await d.client.workspaces.finishRun({ workspace: ws, runId: run.id });
      return { reads: (await gets(port)) - before, ms: Math.round(performance.now() - t) };
    };
    const run0 = (await d.client.workspaces.startRun({ workspace: ws })).run!;
    for (let i = 0; i < files; i++) await d.client.files.write({ workspace: ws, path: `/d/f${String(i).padStart(5, "0")}.txt`, body: { case: "content", value: `${i}\n` } });
    await d.client.workspaces.finishRun({ workspace: ws, runId: run0.id });
    for (let i = 1; i <= 4; i++) await finishOnce(i);
    const baseline = await finishOnce(5);
    // 300 recovered snapshots (what ~12 % killed runs of a few thousand leave), as a daemon writes them.
    const manifestName = readdirSync(path.join(dir, ws)).filter((n) => n.endsWith(".json")).sort()[0]!;
    const manifest = JSON.parse(readFileSync(path.join(dir, ws, manifestName), "utf8"));
    const bytes = readFileSync(path.join(dir, ws, manifestName)).length;
    for (let k = 0; k < 300; k++) {
      const id = `20200101T000000${String(k).padStart(3, "0")}Z-${k.toString(16).padStart(8, "0")}`;
      const { follows: _f, ...rest } = manifest;
      writeFileSync(path.join(dir, ws, `${id}.json`), JSON.stringify({ ...rest, id, tarball: `${ws}/${id}.tar.gz`, recovered: "review probe" }));
    }
    const after = await finishOnce(6);
    console.log(`manifest ${bytes} bytes; FinishRun with 0 recovered: ${baseline.reads} reads, ${baseline.ms} ms; with 300 recovered: ${after.reads} reads, ${after.ms} ms`);
    expect(after.reads).toBeLessThan(baseline.reads + 10);
  }, 240_000);
});
