import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import formatsPlugin from "ajv-formats";
import { z } from "zod";
import type { JSONSchema } from "../core/values.js";

/** A tool input schema written in JSON Schema: the canonical schema and a zod validator for it. */
export interface JsonSchemaInput {
  /** The schema as the model sees it: an object schema without the `$schema` header. */
  inputSchema: JSONSchema;
  /** Validates like a zod tool schema does: one issue per failing path, the input unchanged. */
  input: z.ZodType<Record<string, unknown>>;
}

// No coercion, defaults or stripping: the handler gets the input the model sent, or the call is
// refused. One compiler per dialect, made on first use (making one costs a few hundred ms).
const options = { strict: false, allErrors: true, logger: false } as const;
// A CommonJS module: its default export, typed as the module, is the plugin itself at run time.
const addFormats = formatsPlugin.default;
let draft7: Ajv | undefined;
let draft2020: Ajv2020 | undefined;

function compilerFor(schema: JSONSchema): Ajv | Ajv2020 {
  const dialect = typeof schema.$schema === "string" ? schema.$schema : "";
  // MCP's default dialect is 2020-12; older servers declare draft-07 (zod-to-json-schema's).
  if (/draft-0[4-7]/.test(dialect)) {
    draft7 ??= addFormats(new Ajv(options));
    return draft7;
  }
  draft2020 ??= addFormats(new Ajv2020(options));
  return draft2020;
}

/**
 * Compiles a JSON Schema for a tool's input. Throws (with the compiler's reason) when the
 * schema is not an object schema or cannot be compiled, e.g. for an unresolvable `$ref`.
 */
export function jsonSchemaInput(schema: unknown): JsonSchemaInput {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    throw new Error("the input schema is not a JSON object");
  }
  const document = schema as JSONSchema;
  if (document.type !== "object") {
    throw new Error(`the input schema's type is ${JSON.stringify(document.type)}, not "object"`);
  }
  const compiler = compilerFor(document);
  let validate: ValidateFunction;
  try {
    validate = compiler.compile(document);
  } finally {
    // Forgotten once compiled, so another schema with the same `$id` compiles too.
    compiler.removeSchema(document);
  }
  const { $schema: _header, ...inputSchema } = document;
  return { inputSchema, input: zodFor(validate) };
}

function zodFor(validate: ValidateFunction): z.ZodType<Record<string, unknown>> {
  return z.record(z.string(), z.unknown()).superRefine((value, context) => {
    if (validate(value)) return;
    for (const error of validate.errors ?? []) {
      context.addIssue({ code: "custom", message: messageOf(error), path: pathOf(error) });
    }
  });
}

function pathOf(error: ErrorObject): string[] {
  const path = error.instancePath
    .split("/")
    .slice(1)
    .map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"));
  const params = error.params as { missingProperty?: unknown; additionalProperty?: unknown };
  if (error.keyword === "required" && typeof params.missingProperty === "string") {
    path.push(params.missingProperty);
  }
  if (error.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
    path.push(params.additionalProperty);
  }
  return path;
}

function messageOf(error: ErrorObject): string {
  if (error.keyword === "required") return "is required";
  if (error.keyword === "additionalProperties") return "is not allowed";
  return error.message ?? `fails "${error.keyword}"`;
}
