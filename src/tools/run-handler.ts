import { withDeadline } from "../core/deadline.js";
import type { Timer } from "../core/deps.js";
import {
  type HarnessError,
  messageOf,
  ToolExecutionError,
  ToolTimeoutError,
} from "../core/errors.js";
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

/** How long a handler may run, and the timer that measures it. */
export interface HandlerLimit {
  timeoutMs: number;
  timer: Timer;
}

/** A handler's raw outcome; a failed one names what failed as a HarnessError, built from its message alone. */
export interface HandlerOutcome {
  result: ToolResult;
  error?: HarnessError;
  /** What the handler threw, for a debug log line (never stored). */
  thrown?: unknown;
}

/**
 * The raw outcome of a handler: its stringified return value, or its exception (or a return
 * value JSON cannot represent) as an error result. Past `limit.timeoutMs` the handler's signal is aborted and the call gets an error
 * result at once, without waiting for the handler to notice.
 */
export async function runHandler<Input>(
  tool: Tool<Input>,
  input: Input,
  context: ToolContext,
  limit: HandlerLimit,
): Promise<HandlerOutcome> {
  const timedOut = () => new ToolTimeoutError(tool.name, limit.timeoutMs, { phase: "dispatch" });
  try {
    const outcome = await withDeadline(
      async (scope) =>
        tool.handler(input, {
          ...context,
          // Read through to the call's own signal, made only if the handler reads it.
          get signal() {
            return scope.signal;
          },
        }),
      { ms: limit.timeoutMs, signal: context.signal, timer: limit.timer, reason: timedOut },
    );
    if (outcome.expired) {
      const error = timedOut();
      return { result: errorResult(context.toolCallId, error.message), error };
    }
    const output = stringifyOutput(outcome.value);
    if (!output.ok) {
      const message = `Tool "${tool.name}" returned a value JSON cannot represent (${output.problem}); return a string or JSON data.`;
      return {
        result: errorResult(context.toolCallId, message),
        error: new ToolExecutionError(message, { phase: "dispatch" }),
      };
    }
    return { result: { toolCallId: context.toolCallId, content: output.text, isError: false } };
  } catch (thrown) {
    const message = messageOf(thrown) || "The tool failed.";
    return {
      result: errorResult(context.toolCallId, message),
      error: new ToolExecutionError(message, { phase: "dispatch" }),
      thrown,
    };
  }
}
