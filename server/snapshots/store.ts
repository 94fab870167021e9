// Where snapshots live (SPEC section 1, "store"): a flat blob store chosen by
// URL and bound once at start-up — `file://DIR` or `s3://BUCKET/PREFIX`.
// Keys are relative, "/"-separated (e.g. "reports/<snapshot-id>.tar.gz").
// Failures at use throw FileToolsError STORE_UNAVAILABLE (or NOT_FOUND for a
// missing key); they never take the daemon down.

export interface SnapshotStore {
  /** Describes the store for logs, without credentials (e.g. "s3://bucket/prefix"). */
  readonly description: string;
  /** Daemons on other machines may share it (s3://): runs take leases on it. */
  readonly shared: boolean;
  /**
   * Checks at start-up that the store is usable (directory writable, bucket
   * reachable with these credentials). Throws a plain Error with a clear
   * message otherwise: the daemon must not start.
   */
  check(): Promise<void>;
  /**
   * Streams `body` to `key`. The object becomes visible under `key` only once
   * complete (a temp name + rename locally, a multipart upload on S3): a crash
   * midway leaves nothing under `key`. Never buffers the whole body.
   */
  put(key: string, body: AsyncIterable<Uint8Array>, signal?: AbortSignal): Promise<void>;
  /** The bytes of `key`, streamed. NOT_FOUND when absent. */
  get(key: string, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>>;
  /**
   * Bytes `offset` to `offset + length` of `key`, whole (a ranged GET on S3,
   * a positional read locally). NOT_FOUND when absent; fewer bytes when the
   * object is shorter (the caller decides what that means).
   */
  getRange(key: string, offset: number, length: number, signal?: AbortSignal): Promise<Buffer>;
  /** Keys starting with `prefix`, sorted. */
  list(prefix: string, signal?: AbortSignal): Promise<string[]>;
  /** Removes `key`; absent is not an error. */
  delete(key: string, signal?: AbortSignal): Promise<void>;
  /** A URL that GETs `key` without credentials for `seconds` (an object store only). */
  presignGet?(key: string, seconds: number): Promise<string>;
}

/**
 * Conditional writes (S3's If-None-Match / If-Match on PutObject): what run
 * leases and the workspaces' heads are built on. Small objects only, read and
 * written whole. Nothing here deletes: a conditional delete is not honoured
 * by every S3-compatible server, so leases are overwritten, never removed.
 */
export interface ConditionalStore {
  /** Writes `key` only if it does not exist; its ETag, or undefined when it existed. */
  createIfAbsent(key: string, body: Buffer, signal?: AbortSignal): Promise<string | undefined>;
  /** Overwrites `key` only if its ETag is still `etag`; the new ETag, or undefined when it changed (or vanished). */
  replaceIfMatch(key: string, body: Buffer, etag: string, signal?: AbortSignal): Promise<string | undefined>;
  /** `key`'s text and ETag, or undefined when absent. */
  readWithTag(key: string, signal?: AbortSignal): Promise<{ text: string; etag: string } | undefined>;
}

/** A store with conditional writes: every store the daemon opens. */
export type Store = SnapshotStore & ConditionalStore;

