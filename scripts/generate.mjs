// `npm run generate`: regenerates every client's code from proto/ with
// buf.gen.yaml (local plugins only). Installs what generation needs when it
// is missing: the pinned Python environment (.venv, for grpcio-tools' protoc)
// and the pinned Go plugins (.tools/bin). The output is deterministic: running
// it twice leaves `git status` clean.
import { rmSync } from "node:fs";
import path from "node:path";
import { GENERATED, ROOT, bufGenerate, copyCatalogue, ensureGoPlugins, ensureVenv, run, stampVersion } from "./toolchain.mjs";

try {
  ensureVenv();
  ensureGoPlugins();
  // buf.gen.yaml has no `clean: true` (it would delete the hand-written Python
  // client next to the generated code), so stale files are removed here.
  for (const dir of GENERATED) rmSync(path.join(ROOT, dir), { recursive: true, force: true });
  bufGenerate();
  copyCatalogue();
  stampVersion();
  // The daemon and the TypeScript client import @filetools/proto's build, not its sources.
  run("npm", ["run", "build", "-w", "@filetools/proto"]);
  console.log(`generated: ${GENERATED.join(", ")}`);
} catch (err) {
  console.error(`generate: ${err.message}`);
  process.exit(1);
}
