// The built command line, for the tests that run it (cli, mcp): dist/ is
// rebuilt when a source is newer, once, under a lock shared by test files.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { withDirectoryLock } from "../../../test/support/lock.js";

export const PACKAGE = path.resolve(import.meta.dirname, "..");
export const CLI = path.join(PACKAGE, "dist/cli/main.js");

/** Builds clients/ts/dist when it is missing or older than a source of clients/ts/src. */
export function ensureCliBuilt(): void {
  const newest = (d: string): number =>
    Math.max(
      0,
      ...readdirSync(d, { withFileTypes: true }).map((e) =>
        e.isDirectory() ? newest(path.join(d, e.name)) : e.name.endsWith(".ts") ? statSync(path.join(d, e.name)).mtimeMs : 0,
      ),
    );
  const stale = () => !existsSync(CLI) || newest(path.join(PACKAGE, "src")) > statSync(CLI).mtimeMs;
  if (!stale()) return;
  withDirectoryLock("filetools-cli-build.lock", 120_000, () => {
    if (!stale()) return;
    execFileSync("npx", ["tsc", "-p", path.join(PACKAGE, "tsconfig.json")], { cwd: PACKAGE, stdio: "inherit" });
    execFileSync("touch", [CLI]); // tsc leaves unchanged outputs' mtimes alone
  });
}

