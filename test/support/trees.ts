// Helpers for tests of deep and hostile trees.
import { closeSync, constants, mkdirSync, openSync, writeFileSync } from "node:fs";
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
