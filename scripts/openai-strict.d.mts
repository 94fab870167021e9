// Types of openai-strict.mjs, for the TypeScript tests that import it.
export declare const STRICT_KEYWORDS: Set<string>;
export declare function strictSchema(schema: Record<string, unknown>): Record<string, unknown>;
export declare function strictSchemas(catalogue: { tools: Array<{ name: string; input_schema: Record<string, unknown> }> }): Record<string, Record<string, unknown>>;
