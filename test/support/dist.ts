// The built daemon the e2e tests and benchmarks run: where it is, and whether
// it is older than the sources it is built from.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "../..");
export const MAIN = path.join(ROOT, "dist/server/main.js");
/** bin/filetoolsd: MAIN under node with the daemon's V8 flags, as `npm start` and installs run it. */
export const LAUNCHER = path.join(ROOT, "bin/filetoolsd");

/** True when dist/server/main.js is missing or older than a source file of server/ or of the generated gen/ts/src. */
export function isDistStale(): boolean {
  if (!existsSync(MAIN)) return true;
  const built = statSync(MAIN).mtimeMs;
  return newestSource(path.join(ROOT, "server")) > built || newestSource(path.join(ROOT, "gen/ts/src")) > built;
}

/** tsc leaves the mtimes of unchanged outputs alone: mark the build as fresh after building. */
export function markDistFresh(): void {
  execFileSync("touch", ["-d", new Date().toISOString(), MAIN]);
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}
