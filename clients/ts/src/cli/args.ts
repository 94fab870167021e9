// Parsers for option values; commander reports what they throw as a usage error.
import { InvalidArgumentError } from "commander";

/** An option value that must be a whole number ≥ `min`. */
export function integerAtLeast(min: number): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number < min) {
      throw new InvalidArgumentError(`expected a whole number of at least ${min}`);
    }
    return number;
  };
}

/** A repeatable option: every value, in order. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** A repeatable KEY=VALUE option, into a record. */
export function label(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  const equals = value.indexOf("=");
  if (equals < 1) throw new InvalidArgumentError("expected KEY=VALUE");
  return { ...previous, [value.slice(0, equals)]: value.slice(equals + 1) };
}

/** A point in time: ISO 8601 ("2026-05-01", "2026-05-01T12:00:00Z") or anything Date parses. */
export function time(value: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new InvalidArgumentError("expected a time, e.g. 2026-05-01T12:00:00Z");
  return date;
}

/** Converts an optional count to the bigint of an int64 field. */
export function int64(value: number | undefined): bigint | undefined {
  return value === undefined ? undefined : BigInt(value);
}
