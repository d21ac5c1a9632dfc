import type { OutputFormat } from "../core/provider.js";
import type { JSONSchema, ProviderResponse } from "../core/values.js";

// Structured output on Anthropic's Messages API, which has no response format: the answer is
// a final tool whose input schema is the output's (wrapped in `{ value }` when it is not an
// object), and the adapter turns the model's call of it back into the answer's JSON text.
//
// Forced (`tool_choice: { type: "tool" }`) when the request has no other tools and thinking is
// off: then the only thing the model may do is answer, and forcing guarantees the JSON.
// Offered (`tool_choice` left to the model) when it has other tools, which forcing would take
// away, or with extended thinking, which refuses a forced tool.

const isObjectSchema = (schema: JSONSchema) => schema.type === "object";

/** The final tool's input schema: the output's, or the output wrapped in `{ value }`. */
function finalToolSchema(output: OutputFormat): JSONSchema {
  return isObjectSchema(output.schema)
    ? output.schema
    : { type: "object", properties: { value: output.schema }, required: ["value"] };
}

/** The request fields that ask for `output` as a final tool, beside the request's own tools. */
export function finalToolParams(
  output: OutputFormat,
  otherTools: number,
  extraBody: Record<string, unknown> | undefined,
) {
  const thinking = (extraBody?.thinking as { type?: unknown } | undefined)?.type === "enabled";
  const forced = otherTools === 0 && !thinking;
  return {
    tool: {
      name: output.name,
      description:
        "Give your final answer by calling this tool once; its input is the answer. Call it only when you are done.",
      input_schema: { type: "object" as const, ...finalToolSchema(output) },
    },
    ...(forced ? { tool_choice: { type: "tool" as const, name: output.name } } : {}),
  };
}

/**
 * The response with the final tool's call turned into the answer: a text block holding its
 * JSON, no tool call, and `end_turn` when no other tool was called.
 */
export function answerFromFinalTool(
  response: ProviderResponse,
  output: OutputFormat | undefined,
): ProviderResponse {
  if (output === undefined || !response.toolCalls.some((call) => call.name === output.name)) {
    return response;
  }
  const wrapped = !isObjectSchema(output.schema);
  const content = response.content.map((block) =>
    block.type === "tool_use" && block.name === output.name
      ? {
          type: "text" as const,
          text: JSON.stringify(wrapped ? block.input.value : block.input),
        }
      : block,
  );
  const toolCalls = response.toolCalls.filter((call) => call.name !== output.name);
  return {
    ...response,
    content,
    toolCalls,
    stopReason:
      toolCalls.length === 0 && response.stopReason === "tool_use"
        ? "end_turn"
        : response.stopReason,
  };
}
