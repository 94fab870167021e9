// Stat: the entry itself, plus on request whether it is binary and its line count.
import { openAndRead, type ReadSource } from "./source.js";
import type { Entry } from "../workspace/entry.js";
import { parsePath } from "../workspace/paths.js";
import { BINARY_HEAD_BYTES, looksBinary } from "../text/binary.js";
import { resolveEncoding } from "../text/encoding.js";
import { countLines } from "../text/lines.js";
import type { LineIndex } from "../lineindex/line-index.js";

export interface StatResult {
  entry: Entry;
  isBinary?: boolean;
  lineCount?: bigint;
}

export async function statPath(source: ReadSource, rawPath: string, options: { detectBinary: boolean; countLines: boolean },
  /** Counts through the line index (which it fills, or answers from when the count is known). */
  lineIndex?: LineIndex,
): Promise<StatResult> {
  const parts = parsePath(rawPath);
  const entry = await source.stat(parts);
  if (entry.type !== "file" || (!options.detectBinary && !options.countLines)) return { entry };
  const { file, read } = await openAndRead(source, parts, async (file) => {
    const head = await file.readAt(0, BINARY_HEAD_BYTES);
    const { encoding } = resolveEncoding("", head);
    const isBinary = looksBinary(head, encoding);
    const count = async (): Promise<number> => (lineIndex ? lineIndex.totalLines(file, encoding) : countLines(file.chunks(), encoding));
    const lineCount = options.countLines && !isBinary ? BigInt(await count()) : undefined;
    return { entry, isBinary: options.detectBinary ? isBinary : undefined, lineCount };
  });
  file.close();
  return read;
}
