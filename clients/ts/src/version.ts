// This client's release: its package.json's version, the repository's (the
// freshness check of `npm test` fails when they differ). The daemon's is
// `client.daemon.getVersion({})`.
import { createRequire } from "node:module";

export const VERSION = (createRequire(import.meta.url)("../package.json") as { version: string }).version;
