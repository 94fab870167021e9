// Printing: JSON in the proto3 JSON mapping (as `buf curl` prints it), aligned
// columns for people, and stdout writes that respect a slow reader.
import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { toJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { FileType, type FileInfo } from "@filetools/proto/filetools/v1/common_pb.js";

/**
 * A message as proto3 JSON: camelCase names, 64-bit integers as strings, enums
 * by name, timestamps in RFC 3339. Fields left at their default are printed
 * too, so a script finds every field of the message.
 */
export function jsonOf<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): JsonValue {
  return toJson(schema, message, { alwaysEmitImplicit: true });
}

/** One JSON document (what every --json command prints, except the streams below). */
export async function printJson(value: JsonValue): Promise<void> {
  await writeOut(`${JSON.stringify(value, null, 2)}\n`);
}

/** One line of JSON Lines (grep prints one per result as it arrives, runs changes one per change). */
export async function printJsonLine(value: JsonValue): Promise<void> {
  await writeOut(`${JSON.stringify(value)}\n`);
}

/** Writes to stdout, waiting while the reader is behind (a huge read piped to a slow consumer). */
export async function writeOut(text: string | Uint8Array): Promise<void> {
  if (process.stdout.write(text)) return;
  await new Promise<void>((resolve) => process.stdout.once("drain", resolve));
}

/** A remark for people (paging hints, truncation) on stderr, so stdout stays the data. */
export function note(text: string): void {
  process.stderr.write(`filetools: ${text}\n`);
}

/** Rows as aligned columns, two spaces apart; columns listed in `right` are right-aligned (numbers). */
export function table(rows: string[][], right: number[] = []): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => {
          if (i === row.length - 1 && !right.includes(i)) return cell; // no trailing blanks
          return right.includes(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!);
        })
        .join("  "),
    )
    .map((line) => `${line}\n`)
    .join("");
}

/** "2026-12-02 16:11" in local time, as `ls -l` shows times. */
export function localTime(timestamp: Timestamp | undefined): string {
  if (!timestamp) return "";
  const date = timestampDate(timestamp);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** 1 → "1 file", 3 → "3 files". */
export function fileCount(count: bigint | number): string {
  return `${count} ${BigInt(count) === 1n ? "file" : "files"}`;
}

/** 1536 → "1.5 KiB". */
export function humanBytes(bytes: bigint | number): string {
  let value = Number(bytes);
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

const TYPE_LETTER: Record<FileType, string> = {
  [FileType.UNSPECIFIED]: "?",
  [FileType.FILE]: "-",
  [FileType.DIRECTORY]: "d",
  [FileType.SYMLINK]: "l",
  [FileType.OTHER]: "o",
};

/** "drwxr-xr-x", as `ls -l` shows type and permission bits. */
export function modeString(file: FileInfo): string {
  const bits = ["r", "w", "x"];
  let text = TYPE_LETTER[file.type];
  for (let i = 8; i >= 0; i--) text += file.mode & (1 << i) ? bits[(8 - i) % 3] : "-";
  return text;
}

export function typeName(type: FileType): string {
  return FileType[type].toLowerCase();
}
