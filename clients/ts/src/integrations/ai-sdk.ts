// The catalogue's tools for the Vercel AI SDK (`ai`): a ToolSet to pass to
// generateText/streamText. Each tool's execute runs the dispatcher, so the
// model reads the same texts as everywhere else (errors included: they are
// results, not exceptions) and the SDK's abort signal cancels the daemon's
// call. Imported as "@filetools/client/ai-sdk", so that `ai` is needed only here.
import { jsonSchema, tool, type JSONSchema7, type Tool } from "ai";
import type { ToolDispatcher } from "../tools/dispatcher.js";

/** { read: Tool, write: Tool, … } for `generateText({ tools })`. */
export function aiSdkTools(dispatcher: ToolDispatcher): Record<string, Tool> {
  return Object.fromEntries(
    dispatcher.definitions().map((definition) => [
      definition.name,
      tool({
        description: definition.description,
        inputSchema: jsonSchema(definition.input_schema as JSONSchema7),
        execute: async (args: unknown, { abortSignal }) => (await dispatcher.call(definition.name, args, { signal: abortSignal })).text,
      }),
    ]),
  );
}
