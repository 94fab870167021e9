// A tool result as each model API carries it in a tool's answer: the text
// alone, or the text and the image a read of an image returns. MCP's image
// content is the ToolResult's own shape (mcp/server.ts).
import type { ToolResult } from "./dispatcher.js";

/** The `content` of an Anthropic `tool_result` block: the text, or text and image blocks. */
export function anthropicToolResultContent(
  result: ToolResult,
): string | Array<{ type: "text"; text: string } | { type: "image"; source: { type: "base64"; media_type: string; data: string } }> {
  if (!result.images?.length) return result.text;
  return [{ type: "text", text: result.text }, ...result.images.map((image) => ({ type: "image" as const, source: { type: "base64" as const, media_type: image.mimeType, data: image.data } }))];
}

/**
 * The `output` of an OpenAI Responses API `function_call_output` item: the
 * text, or input_text and input_image parts (a data URL). Chat Completions'
 * tool messages carry text only: send the image parts in a user message there.
 */
export function openAIToolOutput(result: ToolResult): string | Array<{ type: "input_text"; text: string } | { type: "input_image"; image_url: string }> {
  if (!result.images?.length) return result.text;
  return [{ type: "input_text", text: result.text }, ...result.images.map((image) => ({ type: "input_image" as const, image_url: `data:${image.mimeType};base64,${image.data}` }))];
}
