#!/usr/bin/env node
// The `filetools` command. This file is committed, not built, so that npm links
// it into node_modules/.bin when it installs a clone (before dist/ exists; npm
// links no bin whose file is missing), and `npx filetools` finds it there
// rather than the repository's root package, which is also named filetools.
import { existsSync } from "node:fs";

const cli = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write("filetools: the command line is not built yet: run `npm run build` in the repository\n");
  process.exit(1);
}
await import(cli.href);
