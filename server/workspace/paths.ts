// Lexical checks of workspace paths, before any file-system access. A
// workspace path is POSIX style and the workspace root behaves like "/":
// "src/a.ts", "/src/a.ts" and "./src/a.ts" name the same file. Components are
// held names (see names.ts): a request's `\xHH` and `\\` escapes are decoded,
// and paths shown to clients are escaped again.
import { fail } from "../errors.js";
import { MAX_COMPONENT_BYTES, MAX_DEPTH, MAX_PATH_BYTES } from "./limits.js";
import { byteLengthOfName, escapeName, unescapeName } from "./names.js";

/** A path split into its components; [] is the workspace root. */
export type Components = readonly string[];

/** Paths that ended in "/" or "/." (and so name a directory): parsePath marks them. */
const directoryOnly = new WeakSet<Components>();

/**
 * Splits a request path into components, resolving "." and ".." lexically.
 * Refuses what no file name may hold (NUL, control characters, a backslash
 * that is not `\\` or `\xHH`, ill-formed UTF-16), a ".." that would climb
 * above the root, and paths past the limits (limits.ts).
 */
export function parsePath(raw: string): Components {
  // Escapes take up to 4 characters a byte: bound the text before decoding it.
  if (Buffer.byteLength(raw) > 4 * MAX_PATH_BYTES) fail("INVALID_PATH", `path is longer than ${MAX_PATH_BYTES} bytes`);
  if (!raw.isWellFormed()) fail("INVALID_PATH", "path is not well-formed Unicode");
  // C0 controls and DEL: a NUL truncates paths in C, a newline forges log lines.
  if (/[\u0000-\u001f\u007f]/.test(raw)) {
    fail("INVALID_PATH", "path contains a NUL or control character");
  }
  const decoded = raw.split("/").map((part) => {
    const name = unescapeName(part);
    if (name === null) fail("INVALID_PATH", "path contains a backslash that is not an escape (use '/' as the separator, \\\\ for a backslash, \\xHH for a byte)");
    if (/[\u0000-\u001f\u007f/]/.test(name)) fail("INVALID_PATH", "path escapes a NUL, control character or '/'");
    return name;
  });
  const parts = resolveComponents([], decoded, raw.startsWith("/"));
  if (byteLengthOfPath(parts) > MAX_PATH_BYTES) fail("INVALID_PATH", `path is longer than ${MAX_PATH_BYTES} bytes`);
  if (parts.length > 0 && /\/\.?$/.test(raw)) directoryOnly.add(parts);
  return parts;
}

/** Whether the request path ended in "/" or "/.", so that it must name a directory. */
export function namesDirectory(parts: Components): boolean {
  return directoryOnly.has(parts);
}

/** Resolves `relative` (a symlink's target text, a held name string) against `base`. */
export function joinComponents(base: Components, relative: string): Components {
  return resolveComponents(base, relative.split("/"), relative.startsWith("/"));
}

function resolveComponents(base: Components, relative: readonly string[], absolute: boolean): string[] {
  const out = absolute ? [] : [...base];
  for (const part of relative) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length === 0) fail("PATH_ESCAPES_WORKSPACE", `path ${quote(relative.join("/"))} leads outside the workspace`);
      out.pop();
      continue;
    }
    if (byteLengthOfName(part) > MAX_COMPONENT_BYTES) {
      fail("INVALID_PATH", `path component is longer than ${MAX_COMPONENT_BYTES} bytes`);
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

/** Bytes of a path below the root: components joined by "/". */
export function byteLengthOfPath(parts: Components): number {
  let bytes = Math.max(0, parts.length - 1);
  for (const part of parts) bytes += byteLengthOfName(part);
  return bytes;
}

/** Refuses to create an entry at `parts` past the tree limits (depth, path bytes). */
export function checkCreatable(parts: Components): void {
  if (parts.length > MAX_DEPTH) fail("INVALID_PATH", `${displayPath(parts.slice(0, 8))}/… would be deeper than ${MAX_DEPTH} levels`);
  if (byteLengthOfPath(parts) > MAX_PATH_BYTES) fail("INVALID_PATH", `${displayPath(parts.slice(0, 8))}/… would be longer than ${MAX_PATH_BYTES} bytes`);
}

/** The workspace path shown to clients: "/" for the root, "/a/b" otherwise, names escaped (names.ts). */
export function displayPath(parts: Components): string {
  return "/" + parts.map(escapeName).join("/");
}

function quote(text: string): string {
  return JSON.stringify(text.length > 200 ? text.slice(0, 200) + "…" : text);
}
