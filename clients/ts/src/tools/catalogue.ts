// The tool catalogue: what a model sees of filetools (names, descriptions,
// argument schemas, annotations, the hints appended to errors). Its one source
// is catalogue/tools.json at the repository root; `npm run generate` copies it
// next to this package (clients/ts/catalogue/tools.json), where it is read at
// run time from src/ and from dist/ alike. Beside it, openai-strict.json: the
// argument schemas in OpenAI's strict mode, derived by the same step
// (scripts/openai-strict.mjs).
import { readFileSync } from "node:fs";

/** A JSON Schema object, as the catalogue writes it (a subset of draft 2020-12). */
export type JsonSchema = Record<string, unknown>;

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolDefinition {
  /** snake_case, e.g. "read", "make_dir". */
  name: string;
  title: string;
  /** The RPC the tool calls, e.g. "filetools.v1.Files/Read". */
  rpc: string;
  /** Model-facing: what the tool does and how to use it well. */
  description: string;
  annotations: ToolAnnotations;
  input_schema: JsonSchema;
  /** The structured result of a call that succeeded (MCP outputSchema). */
  output_schema: JsonSchema;
  /** This tool's own sentences for some error reasons, used instead of the shared ones (Catalogue.error_hints). */
  error_hints?: Record<string, string[]>;
}

/** Another tool set over the same daemon, in its own words (catalogue/README.md, "Tool sets"). */
export interface ToolSet {
  /** Every tool and argument name it has: the only ones its texts may name. */
  tools: string[];
  arguments: string[];
  /** Replacements, in order, of the daemon's words in its error messages. */
  words: Array<[string, string]>;
  /** Sentences that replace the shared ones for the reasons listed. */
  error_hints: Record<string, string[]>;
  /** An error's first line ({reason}, {message}), when not `Error ({reason}): {message}.`. */
  error_line?: string;
}

export interface Catalogue {
  version: number;
  tools: ToolDefinition[];
  /** Sentences appended to an error's message, by reason; see catalogue/README.md. */
  error_hints: Record<string, string[]>;
  /** The other tool sets, by name ("server-filesystem", "deepagents", "crewai"). */
  tool_sets: Record<string, ToolSet>;
  /** What a call that never reached the daemon says, in every language. */
  unreachable: { message: string };
}

/** The catalogue as this package ships it. */
export const CATALOGUE_FILE = new URL("../../catalogue/tools.json", import.meta.url);

export const catalogue: Catalogue = JSON.parse(readFileSync(CATALOGUE_FILE, "utf8"));

/** Each tool's argument schema in OpenAI's strict mode: every property required, the optional ones nullable (a null is "left out"). */
export const openAIStrictSchemas: Record<string, JsonSchema> = JSON.parse(readFileSync(new URL("../../catalogue/openai-strict.json", import.meta.url), "utf8"));
