// Each tool set's texts are in its own words: the error hints a model reads
// in each (the catalogue's own tools, server-filesystem, deep agents, crewAI)
// name only tools and arguments it has. The daemon's messages in each tool
// set's words are checked where the tool sets run against a real daemon
// (mcp.test.ts here; the Python tests for deep agents and crewAI).
import { describe, expect, it } from "vitest";
import { catalogue } from "../src/tools/catalogue.js";
import { errorText, inWords } from "../src/tools/texts.js";
import { foreignWords } from "./tool-set-words.js";

const TOOL_SETS = Object.keys(catalogue.tool_sets).filter((name) => !name.startsWith("$"));
const REASONS = [...new Set([...Object.keys(catalogue.error_hints), ...TOOL_SETS.flatMap((name) => Object.keys(catalogue.tool_sets[name]!.error_hints))])].filter((r) => !r.startsWith("$"));
/** Every placeholder the hints use, filled. */
const METADATA = { count: "2", current_version: "abc123", usage_bytes: "1", limit_bytes: "2", usage_files: "1", limit_files: "2", added_bytes: "1", added_files: "1" };

describe("tool sets", () => {
  it("are server-filesystem, deepagents and crewai", () => {
    expect(TOOL_SETS).toEqual(["server-filesystem", "deepagents", "crewai"]);
  });

  it.each([undefined, ...TOOL_SETS])("every error text of %s names only its own tools and arguments", (toolSet) => {
    for (const reason of REASONS) {
      const text = errorText({ reason, codeName: reason, message: "something failed", metadata: METADATA }, undefined, toolSet);
      expect([reason, foreignWords(text, toolSet)]).toEqual([reason, []]);
    }
  });

  it("the checker finds what the issue found: tools and arguments a tool set lacks, Error twice", () => {
    expect(foreignWords("Error: Error (NOT_FOUND): /missing.txt does not exist.\nCheck the path with list, or create the file with write.", "deepagents")).toEqual(["list", "write", "Error twice"]);
    expect(foreignWords("edits[0].old_text not found in /a.py", "deepagents")).toEqual(["old_text"]);
    expect(foreignWords("/b.txt already exists; set overwrite to replace it", "server-filesystem")).toEqual(["overwrite"]);
    expect(foreignWords("/b.txt is a binary file; use Download for its bytes", "crewai")).toEqual(["Download"]);
  });

  it("the daemon's messages for the example defects, in each tool set's words", () => {
    const daemon = [
      "edits[0].old_text not found in /a.py; the closest line is 2: \"x\"",
      "edits[0].old_text occurs 2 times in /a.py; include more surrounding text to make it unique, or set replace_all",
      "/b.txt already exists; set overwrite to replace it",
      "/d is a directory; set recursive to delete it",
      "/b.bin is a binary file; use Download for its bytes",
      "/big.txt is larger than the 256 MiB an edit may load; use Read and Write",
      "edits[0]: new_text is the same as old_text",
    ];
    for (const toolSet of TOOL_SETS) for (const message of daemon) expect([toolSet, message, foreignWords(inWords(message, toolSet), toolSet)]).toEqual([toolSet, message, []]);
    expect(inWords(daemon[0]!, "deepagents")).toBe("old_string not found in /a.py; the closest line is 2: \"x\"");
    expect(inWords(daemon[2]!, "server-filesystem")).toBe("/b.txt already exists: move_file never replaces");
  });

  it("deep agents' tools put \"Error: \" before some errors: its error line does not start with Error", () => {
    expect(errorText({ reason: "NOT_FOUND", codeName: "NOT_FOUND", message: "/missing.txt does not exist", metadata: {} }, undefined, "deepagents")).toBe(
      "/missing.txt does not exist (NOT_FOUND).\nCheck the path with ls or glob, or create the file with write_file.\n",
    );
  });
});
