// The `s3://BUCKET/PREFIX` snapshot store (SPEC section 1, "store"), on the
// AWS SDK for JavaScript v3. Works with AWS S3 and S3-compatible servers
// (SeaweedFS, MinIO, ...) through a configurable endpoint and path-style
// addressing. Credentials come from the SDK's default chain (AWS_ACCESS_KEY_ID
// / AWS_SECRET_ACCESS_KEY, profiles, instance roles) and never appear in a
// description, a log line or an error message.
//
// put() streams the body through a multipart upload (lib-storage Upload,
// at most `queueSize` parts in memory): S3 shows a multipart object only once
// CompleteMultipartUpload succeeds, and a failed or aborted upload is aborted,
// so nothing is ever visible under a key before it is complete. A body
// smaller than one part goes up in one PutObject, which is atomic too.
import { Readable } from "node:stream";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { FileToolsError, fail } from "../errors.js";
import type { ConditionalStore, SnapshotStore } from "./store.js";

export interface S3StoreOptions {
  /** Endpoint URL of an S3-compatible server, e.g. http://127.0.0.1:8333 (default: AWS for the region). */
  endpoint?: string;
  /** Region (default: AWS_REGION / the SDK's chain, else us-east-1). */
  region?: string;
  /** Path-style addressing (http://host/bucket/key), needed by most S3-compatible servers. */
  forcePathStyle?: boolean;
  /** Explicit credentials (tests); otherwise the SDK's default chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Multipart part size in bytes (minimum and default 5 MiB). */
  partSize?: number;
  /** Parts uploaded concurrently (default 2): memory is about partSize × queueSize. */
  queueSize?: number;
  /** Attempts per request, the SDK's retries included (default 3). */
  maxAttempts?: number;
}

const MiB = 1024 * 1024;
export const MIN_PART_SIZE = 5 * MiB;

/** Splits `s3://bucket/some/prefix` into the bucket and a prefix that is empty or ends with "/". */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([^/?#]+)(?:\/([^?#]*))?$/.exec(url);
  const bucket = match?.[1];
  if (!bucket || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new Error(`--store ${url}: expected s3://BUCKET/PREFIX with a valid bucket name`);
  }
  let prefix = (match?.[2] ?? "").replace(/^\/+/, "").replace(/\/+$/, "");
  if (prefix.split("/").some((part) => part === "." || part === "..")) {
    throw new Error(`--store ${url}: the prefix must not contain "." or ".." segments`);
  }
  if (prefix !== "") prefix += "/";
  return { bucket, prefix };
}

export class S3Store implements SnapshotStore, ConditionalStore {
  readonly description: string;
  readonly shared = true;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly endpoint: string;
  private readonly partSize: number;
  private readonly queueSize: number;

  constructor(url: string, options: S3StoreOptions = {}) {
    const { bucket, prefix } = parseS3Url(url);
    this.bucket = bucket;
    this.prefix = prefix;
    this.description = `s3://${bucket}/${prefix}`;
    this.endpoint = options.endpoint ?? "AWS S3";
    this.partSize = Math.max(MIN_PART_SIZE, options.partSize ?? MIN_PART_SIZE);
    this.queueSize = Math.max(1, options.queueSize ?? 2);
    const config: S3ClientConfig = {
      region: options.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? "us-east-1",
      forcePathStyle: options.forcePathStyle ?? false,
      maxAttempts: options.maxAttempts ?? 3,
      // A store that stops answering must fail the call, not hang it.
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
    };
    if (options.endpoint !== undefined) config.endpoint = options.endpoint;
    if (options.credentials !== undefined) config.credentials = options.credentials;
    this.client = new S3Client(config);
  }

  async check(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix, MaxKeys: 1 }));
    } catch (error) {
      throw new Error(`store ${this.description} is unusable: ${this.explain(error)}`);
    }
  }

  async put(key: string, body: AsyncIterable<Uint8Array>, signal?: AbortSignal): Promise<void> {
    const objectKey = this.objectKey(key);
    signal?.throwIfAborted();
    // An error thrown by the body itself is the caller's, not the store's: rethrow it as is. One
    // thrown into the stream from our side (the upload aborted after a failed request) is not the
    // body's; either way the body is returned, so that its producer (a pack) lets go of what it holds.
    let bodyError: { error: unknown } | undefined;
    async function* guarded(): AsyncGenerator<Uint8Array> {
      const chunks = body[Symbol.asyncIterator]();
      try {
        for (;;) {
          let next: IteratorResult<Uint8Array>;
          try {
            next = await chunks.next();
          } catch (error) {
            bodyError = { error };
            throw error;
          }
          if (next.done) return;
          yield next.value;
        }
      } finally {
        if (!bodyError) await chunks.return?.();
      }
    }
    const source = Readable.from(guarded(), { objectMode: false });
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: objectKey, Body: source },
      partSize: this.partSize,
      queueSize: this.queueSize,
      leavePartsOnError: false,
    });
    const onAbort = (): void => void upload.abort().catch(() => {});
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      await upload.done();
    } catch (error) {
      // Make sure no multipart upload is left behind (done() aborts it on most failures already).
      await upload.abort().catch(() => {});
      if (bodyError) throw bodyError.error;
      if (signal?.aborted) throw new FileToolsError("CANCELLED", `upload of ${key} to ${this.description} was cancelled`);
      throw this.unavailable("put", key, error);
    } finally {
      signal?.removeEventListener("abort", onAbort);
      // An aborted upload leaves its body paused, holding the producer (a pack's walk and files) for good.
      source.destroy();
    }
  }

  async get(key: string, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    let response;
    try {
      response = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }),
        signal ? { abortSignal: signal } : {},
      );
    } catch (error) {
      if (isNotFound(error)) fail("NOT_FOUND", `${key} is not in ${this.description}`);
      throw this.unavailable("get", key, error);
    }
    const stream = response.Body as AsyncIterable<Uint8Array> | undefined;
    if (!stream) throw this.unavailable("get", key, new Error("the response has no body"));
    const unavailable = (error: unknown): FileToolsError => this.unavailable("get", key, error);
    return (async function* () {
      try {
        for await (const chunk of stream) yield chunk;
      } catch (error) {
        throw unavailable(error);
      }
    })();
  }

  async getRange(key: string, offset: number, length: number, signal?: AbortSignal): Promise<Buffer> {
    if (length === 0) return Buffer.alloc(0);
    const parts: Uint8Array[] = [];
    try {
      const response = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), Range: `bytes=${offset}-${offset + length - 1}` }),
        signal ? { abortSignal: signal } : {},
      );
      for await (const chunk of (response.Body ?? []) as AsyncIterable<Uint8Array>) parts.push(chunk);
    } catch (error) {
      if (isNotFound(error)) fail("NOT_FOUND", `${key} is not in ${this.description}`);
      // A range past the end of the object: it is shorter than asked for.
      if ((error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode === 416) return Buffer.alloc(0);
      throw this.unavailable("get", key, error);
    }
    return Buffer.concat(parts).subarray(0, length);
  }

  async list(prefix: string, signal?: AbortSignal): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await this.client.send(
          new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix + prefix, ContinuationToken: token }),
          signal ? { abortSignal: signal } : {},
        );
        for (const object of page.Contents ?? []) {
          if (object.Key?.startsWith(this.prefix)) keys.push(object.Key.slice(this.prefix.length));
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (error) {
      throw this.unavailable("list", prefix, error);
    }
    return keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  async delete(key: string, signal?: AbortSignal): Promise<void> {
    try {
      await this.client.send(
        new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }),
        signal ? { abortSignal: signal } : {},
      );
    } catch (error) {
      if (isNotFound(error)) return;
      throw this.unavailable("delete", key, error);
    }
  }

  async createIfAbsent(key: string, body: Buffer, signal?: AbortSignal): Promise<string | undefined> {
    return this.conditionalPut(key, body, { IfNoneMatch: "*" }, signal);
  }

  async replaceIfMatch(key: string, body: Buffer, etag: string, signal?: AbortSignal): Promise<string | undefined> {
    return this.conditionalPut(key, body, { IfMatch: etag }, signal);
  }

  async readWithTag(key: string, signal?: AbortSignal): Promise<{ text: string; etag: string } | undefined> {
    try {
      const response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }), signal ? { abortSignal: signal } : {});
      return { text: (await response.Body?.transformToString("utf8")) ?? "", etag: response.ETag ?? "" };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw this.unavailable("get", key, error);
    }
  }

  /** A PutObject with a precondition; undefined when the store answers 412 (or 409, a concurrent conditional write). */
  private async conditionalPut(key: string, body: Buffer, condition: { IfNoneMatch?: string; IfMatch?: string }, signal?: AbortSignal): Promise<string | undefined> {
    try {
      const response = await this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), Body: body, ...condition }),
        signal ? { abortSignal: signal } : {},
      );
      return response.ETag ?? "";
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 412 || status === 409 || (condition.IfMatch !== undefined && isNotFound(error))) return undefined;
      throw this.unavailable("put", key, error);
    }
  }

  async presignGet(key: string, seconds: number): Promise<string> {
    try {
      return await getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }), { expiresIn: seconds });
    } catch (error) {
      throw this.unavailable("get", key, error);
    }
  }

  /** Closes the client's connections. */
  close(): void {
    this.client.destroy();
  }

  private objectKey(key: string): string {
    if (key === "" || key.startsWith("/") || key.split("/").some((part) => part === "" || part === "." || part === "..")) {
      fail("INVALID_ARGUMENT", `invalid store key ${JSON.stringify(key)}`);
    }
    return this.prefix + key;
  }

  private unavailable(op: string, key: string, error: unknown): FileToolsError {
    if (error instanceof FileToolsError) return error;
    return new FileToolsError("STORE_UNAVAILABLE", `store ${this.description}: ${op} ${key} failed: ${this.explain(error)}`);
  }

  /** A short, credential-free account of an SDK error. */
  private explain(error: unknown): string {
    const e = error as { name?: string; message?: string; code?: string; $metadata?: { httpStatusCode?: number } };
    const status = e?.$metadata?.httpStatusCode;
    const name = e?.name ?? "Error";
    let text: string;
    if (name === "CredentialsProviderError" || /credential/i.test(e?.message ?? "") && status === undefined) {
      text = "no AWS credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or configure a profile or role)";
    } else if (status === 404 || name === "NotFound" || name === "NoSuchBucket") {
      text = `bucket ${this.bucket} does not exist at ${this.endpoint}`;
    } else if (status === 403 || name === "InvalidAccessKeyId" || name === "SignatureDoesNotMatch" || name === "AccessDenied") {
      text = `access denied to bucket ${this.bucket} at ${this.endpoint} (${name}): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY and the bucket's permissions`;
    } else if (status === 301 || name === "PermanentRedirect") {
      text = `bucket ${this.bucket} is in another region: set --s3-region`;
    } else if (status !== undefined) {
      text = `${name} (HTTP ${status})`;
    } else {
      const code = e?.code ?? (error as { cause?: { code?: string } })?.cause?.code;
      text = `cannot reach ${this.endpoint}: ${code ? `${code} ` : ""}${e?.message ?? String(error)}`;
    }
    return redact(text);
  }
}

/** A missing key (not a missing bucket, which makes the store unavailable). */
function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  if (e?.name === "NoSuchBucket") return false;
  return e?.name === "NoSuchKey" || e?.name === "NotFound" || e?.$metadata?.httpStatusCode === 404;
}

/** Removes any credential the process knows of from a message. */
function redact(text: string): string {
  for (const name of ["AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AWS_SESSION_TOKEN"]) {
    const value = process.env[name];
    if (value && value.length >= 4) text = text.split(value).join("<redacted>");
  }
  return text;
}
