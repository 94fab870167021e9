// The proto compatibility check (part of `npm test`): `buf breaking` with
// buf.yaml's FILE rules, proto/ of the work tree against proto/ as of
// PROTO_BASELINE. There is no release tag yet, so the baseline is a pinned
// commit (0.1.0's contract); from the first release on, it is the newest
// release tag. Moving it is a decision for CHANGELOG.md (README,
// "Compatibility"). Needs the commit in the clone's history.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ROOT, run } from "./toolchain.mjs";

/** The commit whose contract this one must stay compatible with. */
export const PROTO_BASELINE = "131265d94a46535551d9a2848d65db87b2ddb292";

const baseline = mkdtempSync(path.join(tmpdir(), "filetools-proto-baseline-"));
try {
  // git archive rather than buf's .git input: buf cannot clone from a git worktree's .git file.
  const archive = execFileSync("git", ["archive", PROTO_BASELINE, "buf.yaml", "proto"], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  execFileSync("tar", ["-x", "-C", baseline], { input: archive });
  run(path.join(ROOT, "node_modules/.bin/buf"), ["breaking", "--against", baseline]);
  console.log(`ok   proto/ is compatible with ${PROTO_BASELINE.slice(0, 12)} (buf breaking, FILE rules)`);
} catch (err) {
  console.error(`FAIL proto/ against ${PROTO_BASELINE.slice(0, 12)}: ${err.message}`);
  process.exit(1);
} finally {
  rmSync(baseline, { recursive: true, force: true });
}
