// Runs, change sets and snapshots against a real daemon with a file:// store.
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runScenario } from "./runs-scenario.js";

const scratch = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-runs-")));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the end-to-end scenario", () => {
  it("file:// store: daemon B with an empty data dir restores what daemon A's run wrote", async () => {
    await runScenario(`file://${path.join(scratch, "store-scenario")}`);
  }, 60_000);
});
