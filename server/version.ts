// The daemon's version: the repository's package.json, the one source every
// client's version is stamped from (scripts/toolchain.mjs, stampVersion).
// Read from the nearest package.json above this module, as Node finds the one
// that makes dist/ an ES module: server/ under tsx, dist/server/ once built.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

function nearestPackageVersion(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const file = path.join(dir, "package.json");
    if (existsSync(file)) return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
    if (path.dirname(dir) === dir) throw new Error("filetoolsd: no package.json above the daemon's code");
  }
}

export const VERSION = nearestPackageVersion(path.dirname(fileURLToPath(import.meta.url)));
