// Recursive removal through held directory descriptors, never through a
// symlink: a directory swapped for a link mid-walk cannot redirect it
// (the remove-dir-all race of CVE-2022-21658).
import { constants, promises as fsp } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { at, self } from "./resolver.js";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

/** Deletes the directory `name` inside `parent` and everything in it. */
export async function removeTree(parent: FileHandle, name: string): Promise<void> {
  const dir = await fsp.open(at(parent, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  try {
    await removeContents(dir);
  } finally {
    await dir.close();
  }
  await fsp.rmdir(at(parent, name));
}

/** Deletes everything inside `dir` (which stays). */
export async function removeContents(dir: FileHandle): Promise<void> {
  for (const child of await fsp.readdir(self(dir), { withFileTypes: true })) {
    if (child.isDirectory()) await removeTree(dir, child.name);
    else await fsp.unlink(at(dir, child.name));
  }
}
