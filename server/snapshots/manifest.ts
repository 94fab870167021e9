// A snapshot's manifest: written by the daemon, read back from a store that
// other processes can write to, so every manifest read is checked against
// this schema before anything acts on it (ListSnapshots leaves out one that
// fails, with a warning; the other calls answer DATA_LOSS).
import { z } from "zod";
import { fail } from "../errors.js";
import { ChangeSchema, ChangeSummarySchema, parseRecord } from "../runs/records.js";
import { FileListSchema } from "./file-list.js";

export const SNAPSHOT_ID = /^[0-9]{8}T[0-9]{9}Z-[0-9a-f]{8}$/;

/** Tables of contents a delta may stand on (contents-delta.ts), itself excluded: the most a reader fetches for one snapshot. */
export const MAX_CONTENTS_CHAIN = 31;

/** A stored table of contents: where it is, and its size and sha256 (hex). */
export const TableRefSchema = z.object({ key: z.string(), bytes: z.int().nonnegative(), sha256: z.string().regex(/^[0-9a-f]{64}$/) });
export type TableRef = z.infer<typeof TableRefSchema>;

const ManifestSchema = z.object({
  id: z.string().regex(SNAPSHOT_ID),
  workspace: z.string(),
  runId: z.string(),
  /** ISO 8601. */
  createdAt: z.iso.datetime(),
  sizeBytes: z.int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  fileCount: z.int().nonnegative(),
  labels: z.record(z.string(), z.string()),
  changes: ChangeSummarySchema,
  /** The run's change set, in order ([] for a snapshot outside a run). */
  changeSet: z.array(ChangeSchema),
  /** Store key of the tarball: always `<workspace>/<id>.tar.gz`. */
  tarball: z.string(),
  /**
   * The snapshot its content was made from: the one its run started from,
   * or the run's previous snapshot; for a recovered one, the snapshot the
   * copy was of; "" for none (and in manifests older than the field).
   */
  parent: z.string().default(""),
  /**
   * The head it was published over (heads.ts): the main line is the chain of
   * `follows` from the head. Equal to parent except after a rollback (a run
   * that restored an older snapshot). Absent in manifests older than heads
   * (their parent is followed instead) and in recovered ones.
   */
  follows: z.string().optional(),
  /** Why it is off the main line (a recovered snapshot); absent for a snapshot meant for it. */
  recovered: z.string().optional(),
  /** The node that wrote it (--node-name); absent in older manifests. */
  node: z.string().optional(),
  /**
   * Every regular file and symbolic link packed, with sizes, modes and
   * SHA-256s (file-list.ts), for DiffSnapshots; absent in manifests older
   * than the field, which a diff then refuses (SNAPSHOT_WITHOUT_FILE_LIST).
   */
  files: FileListSchema.optional(),
  /**
   * The seekable format (seekable.ts): its table of contents, an object of
   * its own (contents.ts), with that object's size and sha256; when it is a
   * delta (contents-delta.ts), the tables it stands on, nearest first, each
   * with its size and sha256. Absent in the older format (one plain `.tar.gz`
   * with the file list above).
   */
  contents: TableRefSchema.extend({ bases: z.array(TableRefSchema).max(MAX_CONTENTS_CHAIN).optional() }).optional(),
  /** Every tarball its content is in, its own included (seekable format): what pruning must keep while it is kept. */
  tarballs: z.array(z.string()).optional(),
  /** Bytes of file content in the whole tree (seekable format); `sizeBytes` is what this snapshot itself stored. */
  treeBytes: z.int().nonnegative().optional(),
});

export type Manifest = z.infer<typeof ManifestSchema>;

/** The store key of a snapshot's tarball. */
export function tarballKey(workspaceId: string, id: string): string {
  return `${workspaceId}/${id}.tar.gz`;
}

/** The store key of a seekable snapshot's table of contents. */
export function contentsKey(workspaceId: string, id: string): string {
  return `${workspaceId}/${id}.contents.json.gz`;
}

/** The store key of the full tarball written for a presigned export of a snapshot that points at others' tarballs. */
export function exportKey(workspaceId: string, id: string): string {
  return `${workspaceId}/${id}.export.tar.gz`;
}

/** The snapshot id a workspace's tarball key names, or undefined when the key is not one. */
export function tarballId(workspaceId: string, key: string): string | undefined {
  const prefix = `${workspaceId}/`;
  if (!key.startsWith(prefix) || !key.endsWith(".tar.gz")) return undefined;
  const id = key.slice(prefix.length, -".tar.gz".length);
  return SNAPSHOT_ID.test(id) ? id : undefined;
}

/** Every tarball and table of contents it reads from, its own and other snapshots': what pruning must keep while it is kept. */
export function objectsReadBy(manifest: Manifest): string[] {
  return [...(manifest.tarballs ?? [manifest.tarball]), ...(manifest.contents?.bases ?? []).map((b) => b.key)];
}

/** The snapshot id a workspace's table-of-contents key names, or undefined when the key is not one. */
export function contentsId(workspaceId: string, key: string): string | undefined {
  const prefix = `${workspaceId}/`;
  if (!key.startsWith(prefix) || !key.endsWith(".contents.json.gz")) return undefined;
  const id = key.slice(prefix.length, -".contents.json.gz".length);
  return SNAPSHOT_ID.test(id) ? id : undefined;
}

/** Whether the snapshot is self-contained: its own tarball holds the whole tree (an old-format one always). */
export function selfContained(manifest: Manifest): boolean {
  return !manifest.tarballs || (manifest.tarballs.length === 1 && manifest.tarballs[0] === manifest.tarball);
}

/** The manifest stored as `<workspaceId>/<id>.json`; DATA_LOSS when it is not a valid one, or names another snapshot or tarball. */
export function parseManifest(workspaceId: string, id: string, text: string): Manifest {
  const parsed = parseRecord(ManifestSchema, text);
  if (!parsed.ok) fail("DATA_LOSS", `the manifest of snapshot ${id} of workspace ${workspaceId} is damaged (${parsed.problem})`);
  const manifest = parsed.value;
  const foreign = (manifest.tarballs ?? []).some((key) => tarballId(workspaceId, key) === undefined) || (manifest.contents?.bases ?? []).some((b) => contentsId(workspaceId, b.key) === undefined);
  const contents = manifest.contents === undefined || manifest.contents.key === contentsKey(workspaceId, id);
  if (manifest.id !== id || manifest.workspace !== workspaceId || manifest.tarball !== tarballKey(workspaceId, id) || foreign || !contents) {
    fail("DATA_LOSS", `the manifest of snapshot ${id} of workspace ${workspaceId} names another snapshot or tarball`);
  }
  // A chain that comes back to a table (each may inflate to a gigabyte before it is refused) or names a tarball twice.
  const chain = manifest.contents ? [manifest.contents.key, ...(manifest.contents.bases ?? []).map((b) => b.key)] : [];
  if (new Set(chain).size !== chain.length || new Set(manifest.tarballs).size !== (manifest.tarballs ?? []).length) {
    fail("DATA_LOSS", `the manifest of snapshot ${id} of workspace ${workspaceId} names a table of contents or tarball twice`);
  }
  return manifest;
}
