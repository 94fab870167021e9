// fsync of a directory, so that a rename or a new name in it survives a crash.
import { promises as fsp } from "node:fs";

export async function syncDirectory(dir: string): Promise<void> {
  const handle = await fsp.open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
