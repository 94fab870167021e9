// Helpers for tests of deep and hostile trees.
import { createHash } from "node:crypto";
import { closeSync, constants, lstatSync, lutimesSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { FileToolsError } from "../../server/errors.js";

/**
 * A chain of `depth` directories "x" below `top`, with the file `bottom`
 * (name and content) at its end, built through descriptors: the host path
 * passes PATH_MAX.
 */
export function deepChain(top: string, depth: number, bottom: { name: string; content: string }): void {
  mkdirSync(top, { recursive: true });
  let fd = openSync(top, constants.O_RDONLY | constants.O_DIRECTORY);
  for (let i = 0; i < depth; i++) {
    mkdirSync(`/proc/self/fd/${fd}/x`);
    const next = openSync(`/proc/self/fd/${fd}/x`, constants.O_RDONLY | constants.O_DIRECTORY);
    closeSync(fd);
    fd = next;
  }
  writeFileSync(`/proc/self/fd/${fd}/${bottom.name}`, bottom.content);
  closeSync(fd);
}

/** The reason a domain call failed with ("no error" when it did not), checking its message names no host path under `hostRoot`. */
export async function reasonOf(hostRoot: string, call: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof call === "function" ? call() : call);
  } catch (error) {
    if (error instanceof FileToolsError) {
      expect(error.message).not.toContain(hostRoot);
      return error.reason;
    }
    throw error;
  }
  return "no error";
}

/** Every entry below `dir`: directories, link targets, file digests (hidden names included), to compare a tree before and after. */
export function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (p: string, rel: string) => {
    for (const name of readdirSync(p).sort()) {
      const full = path.join(p, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(full);
      if (st.isDirectory()) {
        out[r + "/"] = "dir";
        walk(full, r);
      } else if (st.isSymbolicLink()) out[r] = `-> ${readlinkSync(full)}`;
      else out[r] = createHash("sha256").update(readFileSync(full)).digest("hex");
    }
  };
  walk(dir, "");
  return out;
}

/** Every entry below `dir` (directories, files, links themselves) with its mtime in whole seconds: what a table of contents records. */
export function mtimes(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  const walk = (p: string, rel: string) => {
    for (const name of readdirSync(p).sort()) {
      const full = path.join(p, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(full, { bigint: true });
      out[r] = Number(st.mtimeNs / 1_000_000_000n);
      if (st.isDirectory()) walk(full, r);
    }
  };
  walk(dir, "");
  return out;
}

/**
 * Gives every entry below `dir` its own mtime in the past, a fraction of a
 * second past a whole one (links themselves; children first, so that no
 * directory's is moved after): a restore that left any entry at the time
 * it was made, or at the wrong second, shows in `mtimes`.
 */
export function ageTree(dir: string, from = 1_500_000_000): void {
  let next = from;
  const walk = (p: string) => {
    for (const name of readdirSync(p).sort()) {
      const full = path.join(p, name);
      if (lstatSync(full).isDirectory()) walk(full);
      lutimesSync(full, next, next + 0.25);
      next += 1000;
    }
  };
  walk(dir);
}
