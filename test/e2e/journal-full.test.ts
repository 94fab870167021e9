// A real full disk under the journal: the daemon's data directory (journal,
// run change sets, the room the journal keeps) is an 8 MiB tmpfs, mounted
// here (the tests run as root), filled from outside; the workspace is bound
// elsewhere, so its files still fit. Every Write is then either applied,
// journaled and acknowledged, or refused (NO_SPACE) and not applied: never
// applied and answered as failed. The journal keeps what it acknowledged
// across a SIGKILL.
import { execFileSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, realpathSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileToolsError } from "../../clients/ts/src/index.js";
import { startDaemon, type Daemon } from "./daemon.js";

const dataDir = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-e2e-journal-full-")));
const bound = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-e2e-journal-full-ws-")));
let refused = "";
try {
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", dataDir], { stdio: "pipe" });
} catch (error) {
  refused = String((error as { stderr?: Buffer }).stderr ?? error).trim();
}
if (refused) console.warn(`journal disk-full tests skipped: mount -t tmpfs was refused (${refused}); they need root`);

const filler = path.join(dataDir, "filler");
const daemonArgs = { dataDir, binds: { full: bound }, args: ["--outside-watch", "off"] };

/** Fills the data directory's disk from outside, to the last byte. */
function fillDisk(): void {
  const fd = openSync(filler, "a");
  try {
    for (let chunk = 1024 * 1024; chunk >= 1; chunk = Math.floor(chunk / 2)) {
      const bytes = Buffer.alloc(chunk, "f");
      for (;;) {
        try {
          writeSync(fd, bytes);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "ENOSPC") break;
          throw error;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

describe.skipIf(refused !== "")("a full disk under the journal (an 8 MiB tmpfs as the data directory)", () => {
  let d: Daemon;
  beforeAll(async () => {
    d = await startDaemon(daemonArgs);
  });
  afterAll(async () => {
    await d?.stop();
    execFileSync("umount", [dataDir]);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(bound, { recursive: true, force: true });
  });

  it("a Write is applied, journaled and acknowledged, or refused with NO_SPACE and not applied; a SIGKILL loses none acknowledged", async () => {
    const w = d.client.workspace("full");
    const run = await w.startRun({ restore: "NONE" });
    await w.writeText("before.txt", "written before the disk filled\n");
    fillDisk();
    // Writes go on in the room the journal kept, until an append needs it: then the room is spent, and the next is refused.
    const acknowledged: string[] = [];
    let refusal: FileToolsError | undefined;
    for (let i = 0; i < 200 && !refusal; i++) {
      try {
        acknowledged.push((await w.writeText(`w${i}.txt`, `write ${i}\n`)).path);
      } catch (error) {
        refusal = error as FileToolsError;
        expect(existsSync(path.join(bound, `w${i}.txt`))).toBe(false);
      }
    }
    expect(refusal?.reason).toBe("NO_SPACE");
    expect(refusal?.message).not.toContain(dataDir);
    // Refused before it was applied, as every change is until there is room again.
    await expect(w.delete("before.txt")).rejects.toMatchObject({ reason: "NO_SPACE" });
    expect(existsSync(path.join(bound, "before.txt"))).toBe(true);
    const changed = new Set((await w.changeSet(run.id)).map((change) => change.path));
    expect(acknowledged.filter((p) => !changed.has(p))).toEqual([]);

    d.proc.kill("SIGKILL");
    await new Promise((resolve) => (d.proc.signalCode !== null ? resolve(null) : d.proc.once("exit", resolve)));
    d = await startDaemon(daemonArgs);
    const journaled = new Set((await d.client.workspace("full").journal()).map((entry) => entry.path));
    expect(["/before.txt", ...acknowledged].filter((p) => !journaled.has(p))).toEqual([]);

    // Room again: the journal sets its room aside again, and changes are made.
    rmSync(filler);
    await d.client.workspace("full").writeText("after.txt", "written once there was room\n");
    expect((await d.client.workspace("full").journal()).map((entry) => entry.path)).toContain("/after.txt");
  });
});
