import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listAll, setup, startDaemon, type Daemon } from "./daemon.js";

let second: Daemon | undefined;
afterAll(async () => {
  await second?.stop();
  if (second) rmSync(second.dataDir, { recursive: true, force: true });
});

describe("start-up temp-file sweep", () => {
  it("a leftover .filetools-tmp-* file is removed when the daemon restarts on the same data dir", async () => {
    const first = await setup("w");
    const tmp = path.join(first.root, "sub/.filetools-tmp-0123456789abcdef");
    mkdirSync(path.dirname(tmp), { recursive: true });
    writeFileSync(tmp, "half a write");
    const listed = await listAll(first.client, { workspace: "w", recursive: true, respectGitignore: false });
    expect(listed.paths).not.toContain("/sub/.filetools-tmp-0123456789abcdef");
    await first.stop(true);

    second = await startDaemon({ dataDir: first.dataDir });
    expect(existsSync(tmp)).toBe(false);
    expect((await second.client.files.stat({ workspace: "w", path: "sub" })).file?.path).toBe("/sub");
  });
});
