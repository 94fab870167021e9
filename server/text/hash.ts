// SHA-256 of file contents, as the Edit/Write/Upload responses report it.

import { createHash } from "node:crypto";

/** Lower-case hex SHA-256 of `bytes`. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}
