import { z } from "zod";
import { ConfigError, OutputInvalidError } from "../core/errors.js";
import { jsonProblem } from "../core/json-value.js";
import type { OutputFormat } from "../core/provider.js";
import { type JsonValue, type ProviderResponse, textOf } from "../core/values.js";
import type { RunContext, RunMachineEvent } from "../machines/run-machine.js";
import { describeIssues } from "../tools/validate.js";
import type { RunEnv } from "./run-env.js";

// Structured output (`config.output`): the JSON schema the request asks for, and the check of
// a final answer against the zod schema, which decides between the parsed value, one more try
// for the model, and the run's failure (`output_invalid`).

/** The name requests give the schema (providers label the format or the final tool with it). */
export const OUTPUT_NAME = "final_output";

const formats = new WeakMap<z.ZodType, OutputFormat>();

/** The request's `output` for an agent's `config.output` schema (computed once per schema). */
export function outputFormatOf(schema: z.ZodType | undefined): OutputFormat | undefined {
  if (schema === undefined) return undefined;
  let format = formats.get(schema);
  if (format === undefined) {
    format = { name: OUTPUT_NAME, schema: jsonSchemaOf(schema) };
    formats.set(schema, format);
  }
  return format;
}

/** Refuses, at construction, a `config.output` JSON Schema cannot express. */
export function checkOutputSchema(schema: z.ZodType | undefined): void {
  outputFormatOf(schema);
}

function jsonSchemaOf(schema: z.ZodType): OutputFormat["schema"] {
  try {
    const { $schema: _header, ...rest } = z.toJSONSchema(schema, {
      target: "draft-2020-12",
      io: "input",
    }) as Record<string, unknown>;
    return rest;
  } catch (error) {
    throw new ConfigError(
      `config.output cannot be expressed as JSON Schema (${error instanceof Error ? error.message : String(error)}).`,
    );
  }
}

/** The answer's JSON text: its text blocks, without a Markdown code fence around them. */
function answerText(response: ProviderResponse): string {
  const text = textOf(response.content).trim();
  const fenced = /^```[a-zA-Z]*\s*\n([\s\S]*?)\n?```$/.exec(text);
  return fenced?.[1] ?? text;
}

type Checked = { ok: true; value: JsonValue } | { ok: false; problem: string };

/** Parses and validates a final answer against `schema`: the value, or what failed. */
export function checkAnswer(schema: z.ZodType, response: ProviderResponse): Checked {
  let json: unknown;
  try {
    json = JSON.parse(answerText(response));
  } catch {
    return { ok: false, problem: "the answer is not valid JSON" };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) return { ok: false, problem: describeIssues(parsed.error.issues) };
  // Stored with the run and sent across processes: a transform to a non-JSON value cannot be.
  const problem = jsonProblem(parsed.data);
  if (problem !== undefined) {
    throw new ConfigError(
      `config.output parsed the answer into a value JSON cannot hold (${problem}): use a schema whose output is JSON.`,
    );
  }
  return { ok: true, value: parsed.data as JsonValue };
}

/**
 * Phase `afterLlm` of a final response (no tool calls) when the agent has `config.output`: the
 * parsed value, or the answer sent back with what failed while retries remain, or the failure.
 */
export function settleFinalAnswer(
  schema: z.ZodType,
  context: RunContext,
  env: RunEnv,
  response: ProviderResponse,
): RunMachineEvent {
  const checked = checkAnswer(schema, response);
  if (checked.ok) return { type: "RESPONSE_PROCESSED", response, output: checked.value };
  const failures = (context.outputFailures ?? 0) + 1;
  const retries = env.config.outputRetries;
  const error = new OutputInvalidError(
    `The model's final answer did not match config.output after ${failures} attempt${failures === 1 ? "" : "s"}: ${checked.problem}.`,
    { phase: "afterLlm" },
  ).toJSON();
  return {
    type: "OUTPUT_REJECTED",
    response,
    retry: failures <= retries,
    error,
    feedback: `Your answer does not match the required output schema: ${checked.problem}. Answer again with only a JSON value that matches this JSON Schema:\n${JSON.stringify(outputFormatOf(schema)?.schema)}`,
  };
}
