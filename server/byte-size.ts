// Byte counts as people write them: "1048576", "512KiB", "64MiB", "2GiB", "1TiB".
const UNITS: Record<string, number> = { "": 1, KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, TiB: 2 ** 40 };

/** The byte count `text` (or a whole number) says; undefined when it is neither. */
export function parseByteSize(text: string | number): number | undefined {
  if (typeof text === "number") return Number.isSafeInteger(text) && text >= 0 ? text : undefined;
  const match = /^(\d+)\s*(KiB|MiB|GiB|TiB)?$/.exec(text.trim());
  const bytes = match ? Number(match[1]) * UNITS[match[2] ?? ""]! : NaN;
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}
