// Recursive removal through held directory descriptors, never through a
// symlink: a directory swapped for a link mid-walk cannot redirect it
// (the remove-dir-all race of CVE-2022-21658).
import { promises as fsp } from "node:fs";
import { Directory } from "./directory.js";
import { at, self } from "./resolver.js";

/** Deletes the directory `name` inside `parent` and everything in it. */
export async function removeTree(parent: Directory, name: string): Promise<void> {
  const dir = Directory.open(at(parent, name));
  try {
    await removeContents(dir);
  } finally {
    dir.close();
  }
  await fsp.rmdir(at(parent, name));
}

/** Deletes everything inside `dir` (which stays). */
export async function removeContents(dir: Directory): Promise<void> {
  for (const child of await fsp.readdir(self(dir), { withFileTypes: true })) {
    if (child.isDirectory()) await removeTree(dir, child.name);
    else await fsp.unlink(at(dir, child.name));
  }
}
