// The freshness check of the generated code (part of `npm test`): regenerates
// everything into a temporary directory with the pinned toolchain and compares
// it, file by file, with the generated directories of the work tree (in a
// fresh clone: the committed files). Exits 1 and names every stale, missing or
// extra file when they differ; the fix is `npm run generate` and a commit.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { GENERATED, ROOT, bufGenerate, copyCatalogue, ensureGoPlugins, ensureVenv, stampVersion } from "./toolchain.mjs";

/** Files under `dir` (or `dir` itself, a file) relative to `base`, skipping Python's bytecode caches. */
function listFiles(base, dir) {
  if (existsSync(path.join(base, dir)) && statSync(path.join(base, dir)).isFile()) return [dir];
  const out = [];
  const walk = (rel) => {
    const abs = path.join(base, rel);
    if (!existsSync(abs)) return;
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      if (entry.name === "__pycache__") continue;
      const child = path.posix.join(rel, entry.name);
      if (entry.isDirectory()) walk(child);
      else out.push(child);
    }
  };
  walk(dir);
  return out;
}

const tmp = mkdtempSync(path.join(tmpdir(), "filetools-gen-"));
let problems = [];
let checked = 0;
try {
  ensureVenv();
  ensureGoPlugins();
  bufGenerate(tmp);
  copyCatalogue(tmp);
  stampVersion(tmp);
  for (const dir of GENERATED) {
    const fresh = new Set(listFiles(tmp, dir));
    const tree = new Set(listFiles(ROOT, dir));
    for (const file of [...new Set([...fresh, ...tree])].sort()) {
      checked++;
      if (!tree.has(file)) problems.push(`missing (generated, not in the tree): ${file}`);
      else if (!fresh.has(file)) problems.push(`extra (no longer generated): ${file}`);
      else if (!readFileSync(path.join(tmp, file)).equals(readFileSync(path.join(ROOT, file)))) {
        problems.push(`stale (differs from a fresh generation): ${file}`);
      }
    }
  }
} catch (err) {
  problems = [`could not regenerate: ${err.message}`];
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

// Informational: generated files that differ from the last commit.
const git = spawnSync("git", ["status", "--porcelain", "--", ...GENERATED], { cwd: ROOT, encoding: "utf8" });
if (git.status === 0 && git.stdout.trim()) {
  console.log(`note: generated files with uncommitted changes:\n${git.stdout.trimEnd()}`);
}

if (problems.length > 0) {
  console.error(`FAIL generated code is not fresh; run \`npm run generate\` and commit:`);
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
console.log(`ok   generated code is fresh (${checked} files in ${GENERATED.join(", ")})`);
