// The store factory: one SnapshotStore chosen by the --store URL scheme and
// bound once at start-up. The caller runs store.check() before serving.
//   file://DIR          a local directory (default DATA_DIR/snapshots)
//   s3://BUCKET/PREFIX  an S3-compatible object store (s3-store.ts)
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { S3Settings } from "../config.js";
import { FileStore } from "./file-store.js";
import type { Store } from "./store.js";

/** The default store URL for a data directory. */
export function defaultStoreUrl(dataDir: string): string {
  return `file://${path.join(dataDir, "snapshots")}`;
}

/**
 * Opens the store named by `url`. `dataDir` resolves a relative file:// path;
 * `s3` holds the endpoint, region and addressing of an s3:// store
 * (credentials come from the AWS SDK's default chain).
 * Throws a plain Error with a clear message for an unknown scheme or a bad URL.
 */
export async function openStore(
  url: string,
  dataDir: string,
  s3: S3Settings = { forcePathStyle: false },
): Promise<Store> {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  switch (scheme) {
    case "file": {
      // file:///abs/dir, or file://relative/dir (resolved against the data directory).
      const dir = url.startsWith("file:///") ? fileURLToPath(url) : path.resolve(dataDir, url.slice("file://".length));
      if (!url.startsWith("file://") || dir === "") throw new Error(`--store ${url}: expected file:///absolute/dir`);
      return new FileStore(dir);
    }
    case "s3": {
      // Loaded only here: the AWS SDK is ~27 MiB of a daemon's RSS that a file:// store never uses.
      const { S3Store } = await import("./s3-store.js");
      return new S3Store(url, s3);
    }
    default:
      throw new Error(`--store ${url}: unsupported store; use file://DIR or s3://BUCKET/PREFIX`);
  }
}
