// Recursive removal through held directory descriptors, never through a
// symlink: a directory swapped for a link mid-walk cannot redirect it
// (the remove-dir-all race of CVE-2022-21658). Iterative (tree.ts): a tree
// of any depth, a bounded number of descriptors.
import { rmdirSync, unlinkSync } from "node:fs";
import { Directory } from "./directory.js";
import { at, self } from "./resolver.js";
import { HeldPath, readNames, type DirectoryName } from "./tree.js";

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
    const pending: Array<{ names: DirectoryName[]; next: number }> = [{ names: readNames(path.current()), next: 0 }];
    while (pending.length > 0) {
      const level = pending[pending.length - 1]!;
      if (level.next === level.names.length) {
        pending.pop();
        if (pending.length === 0) break;
        const emptied = path.names().at(-1)!;
        path.leave();
        rmdirSync(at(path.current(), emptied));
        continue;
      }
      const child = level.names[level.next++]!;
      if (child.kind === "directory" && path.enter(child.name)) pending.push({ names: readNames(path.current()), next: 0 });
      else if (child.kind !== "directory") unlinkSync(at(path.current(), child.name));
    }
  } finally {
    path.close();
  }
}
