// What a text may name in a tool set: only its own tools and arguments
// (catalogue/tools.json, tool_sets), never the daemon's API words, and never
// "Error" twice. Shared by the catalogue's test and the MCP profile's.
import { catalogue } from "../src/tools/catalogue.js";

/** Every tool and argument name of the catalogue's own tools, with the values an argument takes by name. */
const NATIVE = new Set(catalogue.tools.flatMap((tool) => [tool.name, ...argumentNames(tool.input_schema)]));

function argumentNames(schema: Record<string, unknown>): string[] {
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const items = schema.items as Record<string, unknown> | undefined;
  const values = ((schema.enum ?? []) as unknown[]).map(String);
  return [...Object.keys(properties), ...values, ...Object.values(properties).flatMap(argumentNames), ...(items ? argumentNames(items) : [])];
}

/** The names a tool set has; undefined: the catalogue's own tools. */
export function vocabulary(toolSet?: string): Set<string> {
  if (toolSet === undefined) return NATIVE;
  const set = catalogue.tool_sets[toolSet]!;
  return new Set([...set.tools, ...set.arguments]);
}

/**
 * The words of `text` that name a tool or argument `toolSet` does not have:
 * a snake_case or camelCase identifier it lacks, a tool or argument of the
 * catalogue's after "set", "with", "use" or "call" that it lacks, an RPC's
 * name (Download, Read and Write), or "Error" twice.
 */
export function foreignWords(text: string, toolSet?: string): string[] {
  const own = vocabulary(toolSet);
  const found = new Set<string>();
  // Identifiers; a path's own names (/src/app_main.py) and quoted file text are not words of the tool set.
  const prose = text.replace(/\/[^\s:;,)"]*/g, " ").replace(/"[^"\n]*"/g, " ");
  for (const [word] of prose.matchAll(/\b[a-z]+(?:_[a-z]+)+\b|\b[a-z]+[A-Z][A-Za-z]*\b/g)) if (!own.has(word)) found.add(word);
  for (const [, word] of prose.matchAll(/\b(?:set|with|use|call)\s+([a-z_]+)/gi)) if (NATIVE.has(word!) && !own.has(word!)) found.add(word!);
  for (const [word] of prose.matchAll(/\bDownload\b|\bUpload\b|\bRead and Write\b/g)) found.add(word);
  if (/Error\b[^\n]*\bError\b/.test(text.split("\n")[0]!) || /^Error: Error/.test(text)) found.add("Error twice");
  return [...found];
}
