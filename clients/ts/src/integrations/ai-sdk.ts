// The catalogue's tools for the Vercel AI SDK (`ai`): a ToolSet to pass to
// generateText/streamText. Each tool's execute runs the dispatcher, so the
// model reads the same texts as everywhere else and the SDK's abort signal
// cancels the daemon's call. A failed call is thrown with the dispatcher's
// text: the SDK then reports a tool-error (not a successful tool-result) and
// gives the model that text as the error. Imported as
// "@filetools/client/ai-sdk", so that `ai` is needed only here.
import { jsonSchema, tool, type JSONSchema7, type Tool } from "ai";
import type { ImageContent, ToolDispatcher } from "../tools/dispatcher.js";

/** A tool's output when it carries an image besides its text. */
interface ToolOutput {
  text: string;
  images: ImageContent[];
}

/** { read: Tool, write: Tool, … } for `generateText({ tools })`. */
export function aiSdkTools(dispatcher: ToolDispatcher): Record<string, Tool> {
  return Object.fromEntries(
    dispatcher.definitions().map((definition) => [
      definition.name,
      tool({
        description: definition.description,
        inputSchema: jsonSchema(definition.input_schema as JSONSchema7),
        execute: async (args: unknown, { abortSignal }): Promise<string | ToolOutput> => {
          const result = await dispatcher.call(definition.name, args, { signal: abortSignal });
          if (result.isError) throw new ToolCallFailed(result.text);
          return result.images?.length ? { text: result.text, images: result.images } : result.text;
        },
        // A read of an image: the text and the image as the SDK's content parts (the model sees the picture).
        toModelOutput: ({ output }: { output: string | ToolOutput }) =>
          typeof output === "string"
            ? { type: "text" as const, value: output }
            : { type: "content" as const, value: [{ type: "text" as const, text: output.text }, ...output.images.map((image) => ({ type: "image-data" as const, data: image.data, mediaType: image.mimeType }))] },
      }),
    ]),
  );
}

/** A tool call that failed: its message is the text the model reads (what failed, and what to do next). */
export class ToolCallFailed extends Error {
  override name = "ToolCallFailed";
}
