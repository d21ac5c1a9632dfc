import { z } from "zod";
import { ToolDefinitionError } from "../core/errors.js";
import type { JSONSchema } from "../core/values.js";

/** The canonical JSON schema of a tool's input: an object schema without the `$schema` header. */
export function toJsonSchema(schema: z.ZodType, toolName: string): JSONSchema {
  let document: JSONSchema;
  try {
    document = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input" }) as JSONSchema;
  } catch (error) {
    throw new ToolDefinitionError(
      `Tool "${toolName}": its input schema cannot be expressed as JSON Schema (${
        error instanceof Error ? error.message : String(error)
      }).`,
    );
  }
  const { $schema: _header, ...rest } = document;
  if (rest.type !== "object") {
    throw new ToolDefinitionError(
      `Tool "${toolName}": its input must be a z.object(...) schema, got JSON type ${JSON.stringify(rest.type)}.`,
    );
  }
  return rest;
}
