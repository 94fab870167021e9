// Globs of requests (List pattern, Search include/exclude, Export include),
// all in picomatch syntax, dot files included; a malformed one is INVALID_ARGUMENT.
import picomatch from "picomatch";
import { fail } from "../errors.js";

/** A matcher for any of `patterns`; `what` names the field in the error message. */
export function globMatcher(patterns: string | readonly string[], what: string): (path: string) => boolean {
  try {
    return picomatch(typeof patterns === "string" ? patterns : [...patterns], { dot: true, strictBrackets: true });
  } catch (error) {
    fail("INVALID_ARGUMENT", `invalid ${what} glob: ${(error as Error).message}`);
  }
}
