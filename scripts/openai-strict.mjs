// The catalogue's argument schemas in OpenAI's strict mode (`strict: true`
// function tools, which the OpenAI Agents SDK uses by default), derived once
// here and shipped beside each client's copy of the catalogue
// (openai-strict.json), so the three languages offer the same definitions.
// Strict mode wants every property listed in `required` and
// `additionalProperties: false` on every object; a property the catalogue
// leaves optional becomes nullable, and the dispatchers read a null as "left
// out". Keywords strict mode refuses (string minLength/maxLength among them)
// are dropped: the dispatchers still check the arguments against the
// catalogue's own schema, so a model that breaks them hears why.

/** Keywords OpenAI's strict mode accepts (its structured outputs guide, "Supported schemas"); others are dropped. */
export const STRICT_KEYWORDS = new Set([
  "type", "description", "title", "properties", "required", "additionalProperties", "items", "enum", "const",
  "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "pattern", "format", "minItems", "maxItems",
]);

/** `schema` as strict mode takes it. */
export function strictSchema(schema) {
  const strict = Object.fromEntries(Object.entries(schema).filter(([keyword]) => STRICT_KEYWORDS.has(keyword)));
  if (schema.items) strict.items = strictSchema(schema.items);
  if (schema.type === "object") {
    const required = new Set(schema.required ?? []);
    const properties = Object.entries(schema.properties ?? {});
    strict.properties = Object.fromEntries(properties.map(([name, sub]) => [name, required.has(name) ? strictSchema(sub) : nullable(strictSchema(sub))]));
    strict.required = properties.map(([name]) => name);
    strict.additionalProperties = false;
  }
  return strict;
}

function nullable(schema) {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return { ...schema, type: [...types, "null"], ...(schema.enum ? { enum: [...schema.enum, null] } : {}) };
}

/** { tool name: strict argument schema } for every tool of `catalogue`. */
export function strictSchemas(catalogue) {
  return Object.fromEntries(catalogue.tools.map((tool) => [tool.name, strictSchema(tool.input_schema)]));
}
