// The tokens file (--tokens): which bearer tokens may call the daemon, and on
// which workspaces. Tokens are kept only as SHA-256 digests and compared in
// constant time, so neither a log nor response timing gives one away.
import { createHash, timingSafeEqual } from "node:crypto";
import { parseByteSize } from "../byte-size.js";
import type { QuotaOverride } from "../quotas/quotas.js";
import { globMatcher } from "../tools/glob.js";

/** What one token may do; `name` is the caller's name in logs (never the token). */
export interface Grant {
  readonly name: string;
  /** True when the token's workspace globs match the workspace id. */
  allows(workspace: string): boolean;
  /** The token's own quota limits (quota_bytes, quota_files), replacing the daemon's for its calls; a field left out keeps the daemon's. */
  readonly quota: QuotaOverride;
}

/** A tokens file that cannot be used; the message says where and why. */
export class TokenFileError extends Error {
  override readonly name = "TokenFileError";
}

interface Entry {
  digest: Buffer;
  grant: Grant;
}

// Visible ASCII: a token travels in an HTTP/2 header after "Bearer ".
const TOKEN_PATTERN = /^[\x21-\x7e]+$/;

export class TokenTable {
  private constructor(private readonly entries: readonly Entry[]) {}

  /**
   * Parses `{"tokens": [{"name", "token", "workspaces": [globs], "quota_bytes"?, "quota_files"?}]}`. Throws
   * TokenFileError for malformed JSON, a missing or empty field, an unknown
   * key (a typo would silently deny), a bad glob, or a duplicate name or token.
   */
  static parse(text: string): TokenTable {
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch (error) {
      throw new TokenFileError(`not valid JSON: ${(error as Error).message}`);
    }
    if (!isObject(document) || !Array.isArray(document.tokens) || document.tokens.length === 0) {
      throw new TokenFileError(`expected {"tokens": [{"name": ..., "token": ..., "workspaces": [...]}, ...]} with at least one token`);
    }
    const entries: Entry[] = [];
    const names = new Set<string>();
    for (const [index, item] of (document.tokens as unknown[]).entries()) {
      const entry = parseEntry(item, `tokens[${index}]`);
      if (names.has(entry.grant.name)) throw new TokenFileError(`tokens[${index}]: the name ${entry.grant.name} is used twice`);
      if (entries.some((e) => e.digest.equals(entry.digest))) throw new TokenFileError(`tokens[${index}] (${entry.grant.name}): the same token is listed twice`);
      names.add(entry.grant.name);
      entries.push(entry);
    }
    return new TokenTable(entries);
  }

  /** How many tokens it holds. */
  get size(): number {
    return this.entries.length;
  }

  /** The grant of `token`, or undefined. Compares against every entry, so the time taken does not depend on which one matches. */
  find(token: string): Grant | undefined {
    const digest = sha256(token);
    let found: Grant | undefined;
    for (const entry of this.entries) {
      if (timingSafeEqual(entry.digest, digest)) found = entry.grant;
    }
    return found;
  }
}

function parseEntry(item: unknown, where: string): Entry {
  if (!isObject(item)) throw new TokenFileError(`${where}: expected an object with name, token and workspaces`);
  const unknownKey = Object.keys(item).find((key) => !KEYS.includes(key));
  if (unknownKey !== undefined) throw new TokenFileError(`${where}: unknown key ${JSON.stringify(unknownKey)} (expected ${KEYS.join(", ")})`);
  const { name, token, workspaces } = item;
  if (typeof name !== "string" || name.trim() === "") throw new TokenFileError(`${where}: name must be a non-empty string`);
  if (typeof token !== "string" || token === "") throw new TokenFileError(`${where} (${name}): token must be a non-empty string`);
  if (!TOKEN_PATTERN.test(token)) throw new TokenFileError(`${where} (${name}): token may hold only visible ASCII characters, no spaces`);
  if (!Array.isArray(workspaces) || workspaces.length === 0 || !workspaces.every((g) => typeof g === "string" && g !== "")) {
    throw new TokenFileError(`${where} (${name}): workspaces must be a non-empty list of workspace id globs ("*" for all)`);
  }
  let allows: (workspace: string) => boolean;
  try {
    allows = globMatcher(workspaces as string[], "workspaces");
  } catch (error) {
    throw new TokenFileError(`${where} (${name}): ${(error as Error).message}`);
  }
  return { digest: sha256(token), grant: { name, allows, quota: parseQuota(item, `${where} (${name})`) } };
}

const KEYS = ["name", "token", "workspaces", "quota_bytes", "quota_files"];

/** quota_bytes (a count or "10GiB") and quota_files (a count); 0 is no limit, for this token's calls. */
function parseQuota(item: Record<string, unknown>, where: string): QuotaOverride {
  const quota: { bytes?: number; files?: number } = {};
  if (item.quota_bytes !== undefined) {
    const bytes = typeof item.quota_bytes === "string" || typeof item.quota_bytes === "number" ? parseByteSize(item.quota_bytes) : undefined;
    if (bytes === undefined) throw new TokenFileError(`${where}: quota_bytes must be a byte count such as 1073741824 or "10GiB" (0: no limit)`);
    quota.bytes = bytes;
  }
  if (item.quota_files !== undefined) {
    if (typeof item.quota_files !== "number" || !Number.isSafeInteger(item.quota_files) || item.quota_files < 0) {
      throw new TokenFileError(`${where}: quota_files must be a whole number (0: no limit)`);
    }
    quota.files = item.quota_files;
  }
  return quota;
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
