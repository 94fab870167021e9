// Names of the temporary files of atomic writes. They are never listed,
// searched or snapshotted, and the start-up sweep removes those a crash left.
import { randomBytes } from "node:crypto";

export const TEMP_FILE_PATTERN = /^\.filetools-tmp-[0-9a-f]{16}$/;

export function tempFileName(): string {
  return `.filetools-tmp-${randomBytes(8).toString("hex")}`;
}
