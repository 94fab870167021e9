// Helpers shared by the unit tests (excluded from the build).
import { FileToolsError } from "./errors.js";

/** The FileToolsError `fn` throws; fails the test when it throws nothing or something else. */
export function caught(fn: () => unknown): FileToolsError {
  try {
    fn();
  } catch (e) {
    if (e instanceof FileToolsError) return e;
    throw e;
  }
  throw new Error("expected a FileToolsError");
}
