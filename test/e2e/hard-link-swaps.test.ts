// A bound directory whose files become hard links to files outside it while
// the daemon packs them (issue 25, items 5 and 6): live exports (with and
// without include globs) and FinishRun snapshots never carry a byte of the
// outside file, a file linked in the middle of its read is left out with a
// warning, and the daemon stays up and answers.
import { spawn, type ChildProcess } from "node:child_process";
import { linkSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon, type Daemon } from "./daemon.js";
import { exportTarball, tarList } from "./runs-scenario.js";
import { eventually } from "../support/process-health.js";

const MARKER = "OUTSIDE-SECRET-5b1e0c";
const SWAP_SECONDS = 15;
const MAX_CALLS = 2000;

let bound: string;
let outside: string;
let store: string;
let d: Daemon;

beforeAll(async () => {
  bound = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-swaps-bound-")));
  outside = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-swaps-outside-"))); // the same file system: links can be made
  store = realpathSync(mkdtempSync(path.join(tmpdir(), "ftd-swaps-store-")));
  writeFileSync(path.join(outside, "secret.txt"), `${MARKER}\n`.repeat(20));
  d = await startDaemon({ binds: { b: bound }, args: ["--store", `file://${store}`, "--log-level", "warn"] });
});

afterAll(async () => {
  await d?.stop();
  for (const dir of [bound, outside, store]) rmSync(dir, { recursive: true, force: true });
});

async function expectAlive(): Promise<void> {
  expect(d.proc.exitCode).toBeNull();
  expect(d.proc.signalCode).toBeNull();
  const stat = await d.client.files.stat({ workspace: "b", path: "a.txt" });
  expect(stat.file?.size).toBe(6n);
}

/** Another process swapping `leaf` between a plain file and a hard link to the outside secret, flat out, until killed (or after 60 s). */
function swapper(leaf: string, secret: string): ChildProcess {
  const code = `
    const fs = require("fs");
    const [leaf, secret] = process.argv.slice(1);
    const end = Date.now() + 60000;
    while (Date.now() < end) {
      try { fs.unlinkSync(leaf); } catch {}
      try { fs.linkSync(secret, leaf); } catch {}
      try { fs.unlinkSync(leaf); } catch {}
      try { fs.writeFileSync(leaf, "plain leaf\\n"); } catch {}
    }`;
  return spawn(process.execPath, ["-e", code, leaf, secret], { stdio: "ignore" });
}

describe("a leaf swapped between a plain file and a hard link to an outside file", () => {
  it(`leaks nothing through live exports and FinishRun snapshots (${SWAP_SECONDS} s or ${MAX_CALLS} calls)`, async () => {
    writeFileSync(path.join(bound, "a.txt"), "first\n");
    writeFileSync(path.join(bound, "z.txt"), "last\n");
    const swapping = swapper(path.join(bound, "leaf"), path.join(outside, "secret.txt"));
    const counts = { calls: 0, tarballs: 0, withLeaf: 0, leaks: 0, snapshots: 0 };
    const check = (tarball: Buffer): void => {
      const plain = gunzipSync(tarball);
      counts.tarballs++;
      if (plain.includes(MARKER)) counts.leaks++;
      if (plain.includes("plain leaf\n")) counts.withLeaf++;
    };
    try {
      const end = Date.now() + SWAP_SECONDS * 1000;
      while (Date.now() < end && counts.calls < MAX_CALLS) {
        const kind = counts.calls++ % 10;
        if (kind === 9) {
          const { run } = await d.client.workspaces.startRun({ workspace: "b", restore: "NONE" });
          const { snapshot } = await d.client.workspaces.finishRun({ workspace: "b", runId: run!.id });
          counts.snapshots++;
          check((await exportTarball(d.client, { workspace: "b", snapshotId: snapshot!.id })).bytes);
        } else {
          check((await exportTarball(d.client, { workspace: "b", live: true, include: kind % 2 === 0 ? [] : ["leaf", "*.txt"] })).bytes);
        }
      }
    } finally {
      swapping.kill();
    }
    // Every tarball the store holds, too (a snapshot is read back by no one but a restore).
    for (const file of readdirSync(path.join(store, "b"))) {
      if (file.endsWith(".tar.gz") && gunzipSync(readFileSync(path.join(store, "b", file))).includes(MARKER)) counts.leaks++;
    }
    console.log("hard-link swaps:", counts);
    expect(counts.leaks).toBe(0);
    expect(counts.snapshots).toBeGreaterThan(0);
    expect(counts.withLeaf).toBeGreaterThan(0); // the leaf was packed when it was a plain file
    expect(d.logs()).toContain("file left out of the tarball"); // and left out when it was not
    await expectAlive();
  }, 60_000);
});

describe("a file linked from outside in the middle of its read", () => {
  it("is left out of a live export with a warning, the rest is exported, and the daemon answers", async () => {
    const big = path.join(bound, "big.bin");
    const size = 64 * 1024 * 1024;
    let linkedMidRead = false;
    // The link must land while the daemon spools the file: watched through its descriptors (the spool grows while it reads).
    for (let attempt = 0; attempt < 5 && !linkedMidRead; attempt++) {
      rmSync(path.join(outside, "alias"), { force: true });
      writeFileSync(big, randomBytes(size));
      const exporting = exportTarball(d.client, { workspace: "b", live: true });
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        const spooled = spoolSize(d.proc.pid!);
        if (spooled > 0 && spooled < size) {
          linkSync(big, path.join(outside, "alias"));
          linkedMidRead = spoolSize(d.proc.pid!) < size; // still reading once linked
          break;
        }
        if (spooled >= size) break; // read already: try again
        await new Promise((resolve) => setImmediate(resolve));
      }
      const exported = await exporting;
      if (linkedMidRead) {
        const names = tarList(exported.bytes);
        expect(names).not.toContain("big.bin");
        expect(names).toContain("z.txt");
        // Eventually: the daemon's log line reaches this process through a pipe, maybe after the export's last byte.
        const warned = /"path":"\/big\.bin".*file left out of the tarball/;
        await eventually(() => warned.test(d.logs()));
        expect(d.logs()).toMatch(warned);
      }
    }
    expect(linkedMidRead).toBe(true);
    unlinkSync(big);
    await expectAlive();
  }, 60_000);
});

/** The size of the daemon's spool file (pack.ts), 0 when it has none open. */
function spoolSize(pid: number): number {
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (!/\/tmp\/spool-[0-9a-f]+ \(deleted\)$/.test(readlinkSync(`/proc/${pid}/fd/${fd}`))) continue;
      return statSync(`/proc/${pid}/fd/${fd}`).size;
    } catch {
      // closed meanwhile
    }
  }
  return 0;
}
