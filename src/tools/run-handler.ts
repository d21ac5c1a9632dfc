import type { ToolCall, ToolResult } from "../core/values.js";
import { stringifyOutput } from "./stringify.js";
import type { Tool, ToolContext } from "./tool.js";

export const errorResult = (toolCallId: string, content: string): ToolResult => ({
  toolCallId,
  content,
  isError: true,
});

export const unknownToolResult = (call: ToolCall): ToolResult =>
  errorResult(call.id, `Unknown tool "${call.name}".`);

export const invalidInputResult = (call: ToolCall, problems: string): ToolResult =>
  errorResult(call.id, `Invalid input for tool "${call.name}": ${problems}`);

/** The raw outcome of a handler: its stringified return value, or its exception as an error result. */
export async function runHandler<Input>(
  tool: Tool<Input>,
  input: Input,
  context: ToolContext,
): Promise<{ result: ToolResult; thrown?: unknown }> {
  try {
    const output: unknown = await tool.handler(input, context);
    return {
      result: { toolCallId: context.toolCallId, content: stringifyOutput(output), isError: false },
    };
  } catch (thrown) {
    const message = thrown instanceof Error ? thrown.message : String(thrown);
    return { result: errorResult(context.toolCallId, message || "The tool failed."), thrown };
  }
}
