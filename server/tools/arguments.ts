// Checks of the numeric and optional fields of requests, shared by the tools.
import { fail } from "../errors.js";

/** An optional count that must be >= 0 and <= max; `fallback` when unset. */
export function countArgument(name: string, value: bigint | number | undefined, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (number < 0) fail("INVALID_ARGUMENT", `${name} must not be negative (got ${value})`);
  if (number > max) fail("INVALID_ARGUMENT", `${name} must be at most ${max} (got ${value})`);
  return number;
}
