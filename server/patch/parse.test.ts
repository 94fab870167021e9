import { describe, expect, it } from "vitest";
import { FileToolsError } from "../errors.js";
import { parsePatch } from "./parse.js";
import { applyHunks } from "./apply.js";

const reasonOf = (f: () => unknown) => {
  try {
    f();
  } catch (error) {
    return error instanceof FileToolsError ? `${error.reason}: ${error.message}` : String(error);
  }
  return "no error";
};

describe("the Codex patch format", () => {
  it("reads what models send: a heredoc around it, CRLF, a first hunk without @@, *** End of File", () => {
    const patch = "apply_patch <<'EOF'\r\n*** Begin Patch\r\n*** Update File: a.txt\r\n-x\r\n+y\r\n*** End of File\r\n*** End Patch\r\nEOF\r\n";
    const [file] = parsePatch(patch);
    expect(file).toEqual({ kind: "update", path: "a.txt", moveTo: undefined, hunks: [{ anchor: "", before: ["x"], after: ["y"], atEnd: true }] });
    expect(applyHunks("x\nq\nx\n", file!.kind === "update" ? file!.hunks : [], "/a.txt")).toBe("x\nq\ny\n");
  });

  it("locates hunks by their lines in order, exactly first, then without trailing whitespace, then trimmed; pure additions go at the end", () => {
    const [file] = parsePatch("*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+B\n@@\n-  c  \n+C\n@@\n+tail\n*** End Patch");
    expect(applyHunks("a\nb\nc\n", file!.kind === "update" ? file!.hunks : [], "/f")).toBe("a\nB\nC\ntail\n");
  });

  it("says which line of the patch is wrong", () => {
    expect(reasonOf(() => parsePatch("*** Begin Patch\n*** Update File: f\n@@\nno prefix\n*** End Patch"))).toBe(
      'INVALID_ARGUMENT: invalid patch: line 4: a hunk\'s line starts with " ", "-" or "+", not "no prefix"',
    );
    expect(reasonOf(() => parsePatch("*** Begin Patch\n*** Add File:   \n*** End Patch"))).toBe('INVALID_ARGUMENT: invalid patch: line 2: "*** Add File:" names no path');
    expect(reasonOf(() => parsePatch("*** Begin Patch\n*** Update File: f\n*** End Patch"))).toBe("INVALID_ARGUMENT: invalid patch: line 3: the update of f has no hunk");
  });

  it("a hunk must come after the previous one", () => {
    const [file] = parsePatch("*** Begin Patch\n*** Update File: f\n@@\n-b\n+B\n@@\n-a\n+A\n*** End Patch");
    expect(reasonOf(() => applyHunks("a\nb\n", file!.kind === "update" ? file!.hunks : [], "/f"))).toMatch(/^OLD_TEXT_NOT_FOUND: hunk 2 of \/f/);
  });
});
