// Trees an agent's shell makes, far past the API's limits: 4,000 and 10,000
// levels. Every walker answers (no "Maximum call stack size exceeded"); a
// snapshot of such a tree fails clearly (QUOTA_EXCEEDED, not STORE_UNAVAILABLE);
// a recursive Delete removes it.
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, expectError, listAll, setup } from "./daemon.js";
import { exportTarball } from "./runs-scenario.js";
import { deepChain as deepChainWith } from "../support/trees.js";

let d: Awaited<ReturnType<typeof setup>>;
beforeAll(async () => {
  d = await setup("deep", { args: ["--store", `file://${path.join("/tmp", `ftd-deep-store-${process.pid}`)}`] });
});
afterAll(async () => {
  // the helper removes the data dir by host path, which the chains exceed
  for (const top of ["/c4000", "/c10000"]) await d.client.files.delete({ workspace: d.ws, path: top, recursive: true }).catch(() => undefined);
  await d.stop();
});

const deepChain = (top: string, depth: number) => deepChainWith(top, depth, { name: "needle.txt", content: "a needle at the bottom\n" });

describe("trees deeper than any limit", () => {
  it("List, Search, live Export, FinishRun and Delete of a 4,000-deep tree answer, each with a clear result", async () => {
    deepChain(path.join(d.root, "c4000"), 4000);
    const listed = await listAll(d.client, { workspace: d.ws, path: "/c4000", recursive: true, maxEntries: 100_000 });
    expect(listed.entries).toHaveLength(4001);
    expect(listed.summary.truncated).toBe(false);
    const results = await collect(d.client.files.search({ workspace: d.ws, path: "/c4000", pattern: "needle", fixedStrings: true }));
    const matches = results.filter((m) => m.event.case === "match");
    expect(matches).toHaveLength(1);
    const summary = results.find((m) => m.event.case === "summary")!.event.value as { truncated: boolean; timedOut: boolean };
    expect({ truncated: summary.truncated, timedOut: summary.timedOut }).toEqual({ truncated: false, timedOut: false });
    await expectError(exportTarball(d.client, { workspace: d.ws, live: true }), "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED");
    const { run } = await d.client.workspaces.startRun({ workspace: d.ws, restore: "NONE" });
    await expectError(d.client.workspaces.finishRun({ workspace: d.ws, runId: run!.id }), "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED");
    await d.client.files.delete({ workspace: d.ws, path: "/c4000", recursive: true });
    expect(existsSync(path.join(d.root, "c4000"))).toBe(false);
  }, 120_000);

  it("Search over a 10,000-deep tree finds the file at the bottom, and says it is complete", async () => {
    deepChain(path.join(d.root, "c10000"), 10_000);
    const results = await collect(d.client.files.search({ workspace: d.ws, path: "/", pattern: "needle", fixedStrings: true }));
    const matches = results.filter((m) => m.event.case === "match");
    expect(matches).toHaveLength(1);
    expect((matches[0]!.event.value as { path: string }).path.endsWith("/x/needle.txt")).toBe(true);
    await d.client.files.delete({ workspace: d.ws, path: "/c10000", recursive: true });
  }, 120_000);
});

describe(".gitignore rules along a deep tree", () => {
  it("a rule with several /**/ (or /***/) inside is left out (it held the daemon's thread for minutes); one with one /**/ applies", async () => {
    deepChain(path.join(d.root, "g1000"), 1000);
    const listed = async (rules: string) => {
      writeFileSync(path.join(d.root, "g1000", ".gitignore"), rules);
      const { paths } = await listAll(d.client, { workspace: d.ws, path: "/g1000", recursive: true, maxEntries: 100_000 });
      return paths.filter((p) => p.endsWith("/needle.txt"));
    };
    expect(await listed("x/**/x/**/x/**/needle.txt\n")).toHaveLength(1);
    expect(await listed("x/***/x/***/x/***/x/***/needle.txt\n")).toHaveLength(1); // "***" is a globstar too
    expect(await listed("x/**/needle.txt\n")).toEqual([]);
    await d.client.files.delete({ workspace: d.ws, path: "/g1000", recursive: true });
  }, 120_000);
});

describe("imports below a directory", () => {
  it("an archive whose members fit from its own root but not below the target directory is refused and changes nothing", async () => {
    const tar = (await import("tar-stream")).default;
    const pack = tar.pack();
    pack.entry({ name: Array(1000).fill("d").join("/") + "/f" }, "x");
    pack.finalize();
    const chunks: Buffer[] = [];
    for await (const chunk of pack as AsyncIterable<Buffer>) chunks.push(chunk);
    const target = "/" + Array(100).fill("t").join("/");
    await d.client.files.makeDir({ workspace: d.ws, path: target, parents: true });
    async function* body() {
      yield { event: { case: "header" as const, value: { workspace: d.ws, path: target } } };
      yield { event: { case: "chunk" as const, value: { data: Buffer.concat(chunks) } } };
    }
    await expectError(d.client.workspaces.importArchive(body()), "FAILED_PRECONDITION", "UNSAFE_ARCHIVE");
    expect(existsSync(path.join(d.root, ...Array(100).fill("t"), "d"))).toBe(false);
  });

  it("an archive merged into a deep tree that is already there lands at the bottom", async () => {
    deepChain(path.join(d.root, "m"), 1000);
    const tar = (await import("tar-stream")).default;
    const pack = tar.pack();
    pack.entry({ name: ["m", ...Array(1000).fill("x"), "merged.txt"].join("/") }, "merged\n");
    pack.finalize();
    const chunks: Buffer[] = [];
    for await (const chunk of pack as AsyncIterable<Buffer>) chunks.push(chunk);
    async function* body() {
      yield { event: { case: "header" as const, value: { workspace: d.ws, path: "/" } } };
      yield { event: { case: "chunk" as const, value: { data: Buffer.concat(chunks) } } };
    }
    await d.client.workspaces.importArchive(body());
    const listed = await listAll(d.client, { workspace: d.ws, path: "/m", recursive: true, maxEntries: 100_000 });
    expect(listed.paths.filter((p: string) => p.endsWith("/merged.txt") || p.endsWith("/needle.txt"))).toHaveLength(2);
    await d.client.files.delete({ workspace: d.ws, path: "/m", recursive: true });
  });
});
