// OpenAI's strict mode (function tools with `strict: true`) takes only a
// subset of JSON Schema. This validator applies the rules of OpenAI's
// structured outputs guide ("Supported schemas") to every definition the
// dispatchers offer with the strict option; the Python and Go dispatchers
// offer the same bytes (their tests compare them with this package's copy).
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../../test/e2e/daemon.js";
import { strictSchemas } from "../../../scripts/openai-strict.mjs";
import { catalogue, openAIStrictSchemas, type JsonSchema } from "../src/tools/catalogue.js";
import { ToolDispatcher, withoutNulls } from "../src/tools/dispatcher.js";
import type { WorkspaceClient } from "../src/workspace.js";

const TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);
/** Keywords strict mode accepts on any schema, and those it accepts for one type. */
const ANY = ["type", "description", "title", "enum", "const", "anyOf", "$ref", "$defs"];
const BY_TYPE: Record<string, string[]> = {
  string: ["pattern", "format"],
  number: ["multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"],
  integer: ["multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"],
  array: ["items", "minItems", "maxItems"],
  object: ["properties", "required", "additionalProperties"],
  boolean: [],
  null: [],
};
const MAX_PROPERTIES = 5000;
const MAX_NESTING = 10;
const MAX_ENUM_VALUES = 1000;

/** What in `schema` OpenAI's strict mode refuses, one line per violation ([] when none). */
export function strictViolations(name: string, schema: JsonSchema): string[] {
  const problems: string[] = [];
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name)) problems.push(`${name}: a function name is 1 to 64 letters, digits, _ or -`);
  if (schema.type !== "object") problems.push(`${name}: the root must be an object (not anyOf)`);
  let properties = 0;
  let enumValues = 0;
  const visit = (node: JsonSchema, at: string, depth: number): void => {
    if (depth > MAX_NESTING) problems.push(`${at}: nested deeper than ${MAX_NESTING} levels`);
    const types = ([] as unknown[]).concat(node.type ?? []);
    for (const t of types) if (typeof t !== "string" || !TYPES.has(t)) problems.push(`${at}: unknown type ${JSON.stringify(t)}`);
    if (types.length === 0 && node.anyOf === undefined && node.$ref === undefined) problems.push(`${at}: no type`);
    const allowed = new Set([...ANY, ...types.flatMap((t) => BY_TYPE[t as string] ?? [])]);
    for (const keyword of Object.keys(node)) if (!allowed.has(keyword)) problems.push(`${at}: keyword ${keyword} is not supported`);
    if (Array.isArray(node.enum)) {
      enumValues += node.enum.length;
      for (const value of node.enum) {
        const t = value === null ? "null" : Number.isInteger(value) ? "integer" : typeof value;
        if (!types.includes(t) && !(t === "integer" && types.includes("number"))) problems.push(`${at}: enum value ${JSON.stringify(value)} is not of type ${types.join("|")}`);
      }
    }
    if (types.includes("object")) {
      const props = (node.properties ?? {}) as Record<string, JsonSchema>;
      const required = (node.required ?? []) as string[];
      if (node.additionalProperties !== false) problems.push(`${at}: additionalProperties must be false`);
      for (const key of Object.keys(props)) if (!required.includes(key)) problems.push(`${at}: property ${key} is not in required`);
      for (const key of required) if (!Object.hasOwn(props, key)) problems.push(`${at}: required names ${key}, which is not a property`);
      properties += Object.keys(props).length;
      for (const [key, sub] of Object.entries(props)) visit(sub, `${at}.${key}`, depth + 1);
    }
    if (node.items !== undefined) visit(node.items as JsonSchema, `${at}[]`, depth + 1);
    for (const sub of (node.anyOf ?? []) as JsonSchema[]) visit(sub, `${at}|`, depth);
  };
  visit(schema, name, 1);
  if (properties > MAX_PROPERTIES) problems.push(`${name}: more than ${MAX_PROPERTIES} properties`);
  if (enumValues > MAX_ENUM_VALUES) problems.push(`${name}: more than ${MAX_ENUM_VALUES} enum values`);
  return problems;
}

// Definitions need no daemon: the dispatcher only reads the catalogue until a call.
const dispatcher = new ToolDispatcher({} as WorkspaceClient);

describe("OpenAI strict-mode definitions", () => {
  it("every definition offered with strict passes OpenAI's strict-mode rules, and says strict: true", () => {
    const tools = dispatcher.openAITools({ strict: true });
    expect(tools.map((t) => t.function.name)).toEqual(catalogue.tools.map((t) => t.name));
    for (const tool of tools) {
      expect(tool.function.strict).toBe(true);
      expect(strictViolations(tool.function.name, tool.function.parameters)).toEqual([]);
    }
  });

  it("the validator finds what breaks strict mode in the catalogue's own schemas (12 of 13 tools: optional arguments, minLength/maxLength)", () => {
    const broken = dispatcher.openAITools().filter((t) => strictViolations(t.function.name, t.function.parameters).length > 0);
    expect(broken.map((t) => t.function.name)).toEqual(catalogue.tools.filter((t) => t.name !== "list_snapshots").map((t) => t.name));
    expect(strictViolations("read", catalogue.tools[0]!.input_schema)).toEqual(
      expect.arrayContaining(["read.path: keyword minLength is not supported", "read: property start_line is not in required"]),
    );
    expect(strictViolations("x", { type: "object", properties: { a: { type: ["string", "null"], enum: ["b", null] } }, required: ["a"], additionalProperties: false })).toEqual([]);
    expect(strictViolations("x", { type: "object", properties: { a: { type: "integer", enum: ["b"], oneOf: [] } }, required: ["a"], additionalProperties: false })).toEqual([
      "x.a: keyword oneOf is not supported",
      'x.a: enum value "b" is not of type integer',
    ]);
  });

  it("each strict schema is the catalogue's: the same properties and types, the optional ones nullable (a null enum value too), each keyword strict mode keeps", () => {
    expect(openAIStrictSchemas).toEqual(strictSchemas(catalogue)); // the shipped copy is fresh
    for (const tool of catalogue.tools) {
      const original = tool.input_schema;
      const strict = openAIStrictSchemas[tool.name]!;
      const compare = (a: JsonSchema, s: JsonSchema, optional: boolean): void => {
        expect(s.type).toEqual(optional ? [a.type, "null"] : a.type);
        if (a.enum) expect(s.enum).toEqual(optional ? [...(a.enum as unknown[]), null] : a.enum);
        for (const keyword of ["minimum", "maximum", "minItems", "maxItems", "description"]) expect(s[keyword]).toEqual(a[keyword]);
        if (a.items) compare(a.items as JsonSchema, s.items as JsonSchema, false);
        const props = (a.properties ?? {}) as Record<string, JsonSchema>;
        const strictProps = (s.properties ?? {}) as Record<string, JsonSchema>;
        expect(Object.keys(strictProps)).toEqual(Object.keys(props));
        for (const [key, sub] of Object.entries(props)) compare(sub, strictProps[key]!, !((a.required ?? []) as string[]).includes(key));
      };
      compare(original, strict, false);
    }
  });

  it("the shipped copies of the strict schemas are the same in the three clients", () => {
    const copies = ["clients/ts/catalogue", "clients/python/src/filetools/catalogue", "clients/go/catalogue"].map((dir) => readFileSync(path.join(ROOT, dir, "openai-strict.json"), "utf8"));
    expect(new Set(copies).size).toBe(1);
  });
});

describe("nulls for optional arguments", () => {
  it("are dropped at every depth the schema describes; a null for a required argument, or one the schema does not know, stays", () => {
    const edit = catalogue.tools.find((t) => t.name === "edit")!.input_schema;
    const given = { path: "/a", edits: [{ old_text: "x", new_text: "y", replace_all: null }], dry_run: null, if_version: null, extra: null };
    expect(withoutNulls(edit, given)).toEqual({ path: "/a", edits: [{ old_text: "x", new_text: "y" }], extra: null });
    expect(given.dry_run).toBeNull(); // the caller's object is left as it was
    expect(withoutNulls(edit, { path: null, edits: [{ old_text: null, new_text: "y" }] })).toEqual({ path: null, edits: [{ old_text: null, new_text: "y" }] });
    const parsed = JSON.parse('{"__proto__": null, "path": "/a"}');
    expect(Object.keys(withoutNulls(edit, parsed) as object)).toEqual(["__proto__", "path"]);
  });
});
