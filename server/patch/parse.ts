// The Codex apply_patch format (openai/codex, apply_patch_tool_instructions.md),
// parsed into the changes it asks for. No I/O.
//
//   *** Begin Patch
//   *** Add File: PATH          then every line "+text"
//   *** Delete File: PATH
//   *** Update File: PATH       then optionally "*** Move to: PATH", then hunks:
//   @@ [a line that locates the hunk]
//    context / -removed / +added lines, optionally "*** End of File"
//   *** End Patch
import { fail } from "../errors.js";

export interface Hunk {
  /** The text after "@@ " (a line found before the hunk's lines), or "" for none. */
  anchor: string;
  /** The lines the hunk expects (context and removed) and the lines it leaves (context and added). */
  before: string[];
  after: string[];
  /** "*** End of File": the hunk's lines end the file. */
  atEnd: boolean;
}

export type FilePatch =
  | { kind: "add"; path: string; lines: string[] }
  | { kind: "delete"; path: string }
  | { kind: "update"; path: string; moveTo?: string; hunks: Hunk[] };

const BEGIN = "*** Begin Patch";
const END = "*** End Patch";
const ADD = "*** Add File: ";
const DELETE = "*** Delete File: ";
const UPDATE = "*** Update File: ";
const MOVE = "*** Move to: ";
const END_OF_FILE = "*** End of File";

export function parsePatch(patch: string): FilePatch[] {
  const lines = patch.replace(/\r\n/g, "\n").replace(/\n$/, "").split("\n");
  // Models often wrap it in a heredoc (apply_patch <<'EOF' … EOF), as Codex's shell form does.
  while (lines.length > 0 && lines[0]!.trim() !== BEGIN && !lines[0]!.startsWith("***")) lines.shift();
  while (lines.length > 0 && lines.at(-1)!.trim() !== END && !lines.at(-1)!.startsWith("***")) lines.pop();
  const bad = (at: number, why: string): never => fail("INVALID_ARGUMENT", `invalid patch: line ${at + 1}: ${why}`);
  if (lines[0]?.trim() !== BEGIN) bad(0, `it must start with "${BEGIN}"`);
  if (lines.length < 2 || lines.at(-1)!.trim() !== END) bad(Math.max(lines.length - 1, 0), `it must end with "${END}"`);
  const files: FilePatch[] = [];
  let i = 1;
  const last = lines.length - 1;
  while (i < last) {
    const line = lines[i]!;
    if (line.startsWith(ADD)) {
      const path = pathOf(line, ADD, i, bad);
      const added: string[] = [];
      for (i++; i < last && lines[i]!.startsWith("+"); i++) added.push(lines[i]!.slice(1));
      files.push({ kind: "add", path, lines: added });
    } else if (line.startsWith(DELETE)) {
      files.push({ kind: "delete", path: pathOf(line, DELETE, i, bad) });
      i++;
    } else if (line.startsWith(UPDATE)) {
      const path = pathOf(line, UPDATE, i, bad);
      i++;
      const moveTo = lines[i]?.startsWith(MOVE) ? pathOf(lines[i++]!, MOVE, i - 1, bad) : undefined;
      const hunks: Hunk[] = [];
      while (i < last && !isFileHeader(lines[i]!)) {
        const header = lines[i]!;
        // The first hunk may leave out its "@@" line (Codex accepts that too).
        const hunk: Hunk = { anchor: header.startsWith("@@") ? header.slice(2).trim() : "", before: [], after: [], atEnd: false };
        if (header.startsWith("@@")) i++;
        else if (hunks.length > 0) bad(i, `expected "@@" or a file header, found ${JSON.stringify(header.slice(0, 80))}`);
        for (; i < last && !lines[i]!.startsWith("@@") && !isFileHeader(lines[i]!); i++) {
          const body = lines[i]!;
          if (body === END_OF_FILE) {
            hunk.atEnd = true;
            continue;
          }
          const text = body.slice(1);
          if (body === "" || body.startsWith(" ")) hunk.before.push(text), hunk.after.push(text);
          else if (body.startsWith("-")) hunk.before.push(text);
          else if (body.startsWith("+")) hunk.after.push(text);
          else bad(i, `a hunk's line starts with " ", "-" or "+", not ${JSON.stringify(body.slice(0, 80))}`);
        }
        if (hunk.before.length === 0 && hunk.after.length === 0) bad(i, `a hunk of ${path} changes nothing`);
        hunks.push(hunk);
      }
      if (hunks.length === 0 && moveTo === undefined) bad(i, `the update of ${path} has no hunk`);
      files.push({ kind: "update", path, moveTo, hunks });
    } else {
      bad(i, `expected "${ADD}", "${DELETE}" or "${UPDATE}", found ${JSON.stringify(line.slice(0, 80))}`);
    }
  }
  if (files.length === 0) bad(1, "it changes no file");
  return files;
}

function isFileHeader(line: string): boolean {
  return line.startsWith(ADD) || line.startsWith(DELETE) || line.startsWith(UPDATE) || line.trim() === END;
}

function pathOf(line: string, prefix: string, at: number, bad: (at: number, why: string) => never): string {
  const path = line.slice(prefix.length).trim();
  return path === "" ? bad(at, `"${prefix.trim()}" names no path`) : path;
}
