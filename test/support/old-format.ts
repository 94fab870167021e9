// A snapshot in the format daemons wrote before the seekable one: one plain
// `.tar.gz` of the whole tree (GNU tar here, as a user's archive would be)
// and a manifest with the file list inline and no table of contents. Stores
// keep such snapshots; restores, exports and diffs must still read them.
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { lstatSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { gunzipSync, gzipSync } from "node:zlib";
import path from "node:path";
import { FileListBuilder } from "../../server/snapshots/file-list.js";
import type { Store } from "../../server/snapshots/store.js";

/** Writes an old-format snapshot of directory `dir` for workspace `workspaceId`; returns its id. */
export async function writeOldSnapshot(store: Store, workspaceId: string, dir: string, parent = ""): Promise<string> {
  const id = `${new Date().toISOString().replace(/[-:]/g, "").replace(".", "")}-${randomBytes(4).toString("hex")}`;
  const names = walk(dir, "");
  const tarball = execFileSync("tar", ["-czf", "-", "--owner=0", "--group=0", "--numeric-owner", "-C", dir, "--no-recursion", ...names.map((n) => n.slice(1))], { maxBuffer: 1 << 30 });
  const list = new FileListBuilder();
  let fileCount = 0;
  for (const name of names) {
    const full = path.join(dir, name);
    const stats = lstatSync(full);
    if (stats.isSymbolicLink()) list.addLink(name, readlinkSync(full));
    else if (stats.isFile()) {
      const content = readFileSync(full);
      list.addFile(name, content.length, stats.mode & 0o777, createHash("sha256").update(content).digest("hex"));
      fileCount++;
    }
  }
  const manifest = {
    id,
    workspace: workspaceId,
    runId: "",
    createdAt: new Date().toISOString(),
    sizeBytes: tarball.length,
    sha256: createHash("sha256").update(tarball).digest("hex"),
    fileCount,
    labels: {},
    changes: { created: 0, modified: 0, deleted: 0, moved: 0 },
    changeSet: [],
    tarball: `${workspaceId}/${id}.tar.gz`,
    parent,
    files: list.build(),
  };
  await store.put(manifest.tarball, once(tarball));
  await store.put(`${workspaceId}/${id}.json`, once(Buffer.from(JSON.stringify(manifest))));
  return id;
}

/** Workspace paths ("/a/b") of everything under `dir`, in the packer's order: sorted names, a directory before its contents. */
function walk(dir: string, prefix: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(dir, prefix)).sort()) {
    const shown = `${prefix}/${name}`;
    out.push(shown);
    if (lstatSync(path.join(dir, shown)).isDirectory()) out.push(...walk(dir, shown));
  }
  return out;
}

async function* once(bytes: Buffer): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/**
 * The entries a stored seekable snapshot's table of contents holds, as JSON
 * (file:// store directory `storeDir`): the whole table, or a delta's added
 * entries (a table of their own: contents-delta.ts).
 */
export function storedContents(storeDir: string, workspaceId: string, id: string): StoredContents {
  const stored = storedTable(storeDir, workspaceId, id);
  return stored.format === 2 ? stored.added! : stored;
}

/** Rewrites what storedContents gave in the stored table, and its manifest's size and sha256 of it: a store tampered with consistently. */
export function plantContents(storeDir: string, workspaceId: string, id: string, contents: StoredContents): void {
  const stored = storedTable(storeDir, workspaceId, id);
  const bytes = gzipSync(JSON.stringify(stored.format === 2 ? { ...stored, added: contents } : contents));
  writeFileSync(path.join(storeDir, workspaceId, `${id}.contents.json.gz`), bytes);
  const manifestFile = path.join(storeDir, workspaceId, `${id}.json`);
  const manifest = JSON.parse(readFileSync(manifestFile, "utf8"));
  manifest.contents = { ...manifest.contents, bytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
  writeFileSync(manifestFile, JSON.stringify(manifest));
}

/**
 * Turns a stored self-contained seekable snapshot into the older format: its
 * own tarball is a whole `.tar.gz` already; the manifest gets the file list
 * inline and loses its table of contents.
 */
export function asOldFormat(storeDir: string, workspaceId: string, id: string): void {
  const manifestFile = path.join(storeDir, workspaceId, `${id}.json`);
  const manifest = JSON.parse(readFileSync(manifestFile, "utf8"));
  if (manifest.contents === undefined) return; // already
  if (manifest.tarballs?.length !== 1 || manifest.contents.bases) throw new Error(`snapshot ${id} points at other snapshots' tarballs or tables`);
  manifest.files = storedContents(storeDir, workspaceId, id).files;
  delete manifest.contents;
  delete manifest.tarballs;
  delete manifest.treeBytes;
  writeFileSync(manifestFile, JSON.stringify(manifest));
  rmSync(path.join(storeDir, workspaceId, `${id}.contents.json.gz`));
}

function storedTable(storeDir: string, workspaceId: string, id: string): StoredContents & { format: number; added?: StoredContents } {
  return JSON.parse(gunzipSync(readFileSync(path.join(storeDir, workspaceId, `${id}.contents.json.gz`))).toString("utf8"));
}

export interface StoredContents {
  tarballs: Array<{ key: string; bytes: number }>;
  files: { paths: string[]; sizes: number[]; sha256: string };
  chunks: { first: number[]; tarball: number[]; offset: number[]; length: number[]; size: number[]; sha256: string };
}
