// Lexical checks of workspace paths, before any file-system access. A
// workspace path is POSIX style and the workspace root behaves like "/":
// "src/a.ts", "/src/a.ts" and "./src/a.ts" name the same file.
import { fail } from "../errors.js";

export const MAX_PATH_BYTES = 4096;
export const MAX_NAME_BYTES = 255;

/** A path split into its components; [] is the workspace root. */
export type Components = readonly string[];

/**
 * Splits a request path into components, resolving "." and ".." lexically.
 * Refuses what no file name may hold (NUL, control characters, backslashes,
 * ill-formed UTF-16) and a ".." that would climb above the root.
 */
export function parsePath(raw: string): Components {
  if (Buffer.byteLength(raw) > MAX_PATH_BYTES) {
    fail("INVALID_PATH", `path is longer than ${MAX_PATH_BYTES} bytes`);
  }
  if (!raw.isWellFormed()) fail("INVALID_PATH", "path is not well-formed Unicode");
  // C0 controls and DEL: a NUL truncates paths in C, a newline forges log lines.
  if (/[\u0000-\u001f\u007f]/.test(raw)) {
    fail("INVALID_PATH", "path contains a NUL or control character");
  }
  if (raw.includes("\\")) fail("INVALID_PATH", "path contains a backslash; use '/' as the separator");
  return joinComponents([], raw);
}

/** Resolves `relative` (a path or a symlink's target text) against `base`. */
export function joinComponents(base: Components, relative: string): Components {
  const out = relative.startsWith("/") ? [] : [...base];
  for (const part of relative.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length === 0) fail("PATH_ESCAPES_WORKSPACE", `path ${quote(relative)} leads outside the workspace`);
      out.pop();
      continue;
    }
    if (Buffer.byteLength(part) > MAX_NAME_BYTES) {
      fail("INVALID_PATH", `path component is longer than ${MAX_NAME_BYTES} bytes`);
    }
    out.push(part);
  }
  return out;
}

/** Requires a path that names something other than the root. */
export function parseFilePath(raw: string): Components {
  const parts = parsePath(raw);
  if (parts.length === 0) {
    fail("INVALID_PATH", raw.trim() === "" || raw === "/" || raw === "." ? "a file path is required" : `${quote(raw)} names the workspace root, not a file`);
  }
  return parts;
}

/** The workspace path shown to clients: "/" for the root, "/a/b" otherwise. */
export function displayPath(parts: Components): string {
  return "/" + parts.join("/");
}

function quote(text: string): string {
  return JSON.stringify(text.length > 200 ? text.slice(0, 200) + "…" : text);
}
