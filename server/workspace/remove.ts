// Recursive removal through held directory descriptors, never through a
// symlink: a directory swapped for a link mid-walk cannot redirect it
// (the remove-dir-all race of CVE-2022-21658). Iterative (tree.ts): a tree
// of any depth, a bounded number of descriptors.
import { rmdirSync, unlinkSync } from "node:fs";
import { Directory } from "./directory.js";
import { at, self } from "./resolver.js";
import { DepthFirst, HeldPath } from "./tree.js";

/** Deletes the directory `name` inside `parent` and everything in it. */
export async function removeTree(parent: Directory, name: string): Promise<void> {
  await removeContents(Directory.open(at(parent, name)), true);
  rmdirSync(at(parent, name));
}

/**
 * Deletes everything inside `dir` (which stays). Synchronous calls: each is
 * a cheap metadata operation. With `owned`, closes `dir` when done.
 */
export async function removeContents(dir: Directory, owned = false): Promise<void> {
  const path = new HeldPath(owned ? dir : Directory.open(self(dir), true));
  try {
    const walk = new DepthFirst(path);
    for (let step = walk.next(); step; step = walk.next()) {
      if ("left" in step) rmdirSync(at(path.current(), step.left));
      else if (step.entry.kind !== "directory") unlinkSync(at(path.current(), step.entry.name));
      else walk.descend(step.entry.name);
    }
  } finally {
    path.close();
  }
}
