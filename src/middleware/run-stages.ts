import type { z } from "zod";
import { MiddlewareContractError, MiddlewareError, toHarnessError } from "../core/errors.js";
import { Message, ProviderResponse, ToolCall, ToolResult, ToolSchema } from "../core/values.js";
import { describeIssues } from "../tools/validate.js";
import type { MiddlewareLike, MiddlewareStages } from "./middleware.js";
import type { PipelineSnapshot } from "./pipeline.js";

const nameOf = (middleware: MiddlewareLike): string =>
  middleware.constructor !== Object ? middleware.constructor.name : "middleware object";

function breach(middleware: MiddlewareLike, stage: keyof MiddlewareStages, problem: string) {
  return new MiddlewareContractError(`${nameOf(middleware)}.${stage} ${problem}`, { phase: stage });
}

/** What a middleware stage threw, as the MiddlewareError the run fails with. */
function thrownBy(middleware: MiddlewareLike, stage: keyof MiddlewareStages, error: unknown) {
  return toHarnessError(
    error,
    (message, options) =>
      new MiddlewareError(`${nameOf(middleware)}.${stage} threw: ${message}`, options),
    stage,
  );
}

// Values returned unchanged need no check; only new objects are parsed.
function checkShape<T>(
  schema: z.ZodType<T>,
  value: unknown,
  middleware: MiddlewareLike,
  stage: keyof MiddlewareStages,
  what: string,
): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw breach(
      middleware,
      stage,
      `returned an invalid ${what}: ${describeIssues(parsed.error.issues)}`,
    );
  }
  return value as T;
}

export async function runBeforeLlmCall(
  pipeline: PipelineSnapshot,
  messages: Message[],
  tools: ToolSchema[],
): Promise<[Message[], ToolSchema[]]> {
  let current: [Message[], ToolSchema[]] = [messages, tools];
  for (const middleware of pipeline.beforeLlmCall) {
    const [inMessages, inTools] = current;
    // Called inline (no closure, no extra async frame): four stages a middleware, every iteration.
    let returned: unknown;
    try {
      returned = await middleware.beforeLlmCall?.(inMessages, inTools);
    } catch (error) {
      throw thrownBy(middleware, "beforeLlmCall", error);
    }
    if (!Array.isArray(returned) || returned.length !== 2) {
      throw breach(middleware, "beforeLlmCall", "must return [messages, tools].");
    }
    const [outMessages, outTools] = returned as [unknown, unknown];
    if (!Array.isArray(outMessages) || !Array.isArray(outTools)) {
      throw breach(middleware, "beforeLlmCall", "must return [messages, tools] as two arrays.");
    }
    if (outMessages !== inMessages) {
      // Only messages the middleware created need a check; unchanged ones were valid before.
      const known = new Set<unknown>(inMessages);
      for (const [index, message] of (outMessages as unknown[]).entries()) {
        if (!known.has(message)) {
          checkShape(Message, message, middleware, "beforeLlmCall", `message at index ${index}`);
        }
      }
    }
    if (outTools !== inTools) {
      for (const [index, schema] of (outTools as unknown[]).entries()) {
        checkShape(
          ToolSchema,
          schema,
          middleware,
          "beforeLlmCall",
          `tool schema at index ${index}`,
        );
      }
    }
    current = [outMessages as Message[], outTools as ToolSchema[]];
  }
  return current;
}

export async function runAfterLlmCall(
  pipeline: PipelineSnapshot,
  response: ProviderResponse,
): Promise<ProviderResponse> {
  let current = response;
  for (const middleware of pipeline.afterLlmCall) {
    const input = current;
    let returned: unknown;
    try {
      returned = await middleware.afterLlmCall?.(input);
    } catch (error) {
      throw thrownBy(middleware, "afterLlmCall", error);
    }
    if (returned !== input) {
      current = checkShape(ProviderResponse, returned, middleware, "afterLlmCall", "response");
    }
  }
  return current;
}

export async function runBeforeToolExecution(
  pipeline: PipelineSnapshot,
  call: ToolCall,
): Promise<ToolCall> {
  let current = call;
  for (const middleware of pipeline.beforeToolExecution) {
    const input = current;
    let returned: unknown;
    try {
      returned = await middleware.beforeToolExecution?.(input);
    } catch (error) {
      throw thrownBy(middleware, "beforeToolExecution", error);
    }
    if (returned === input) continue;
    const next = checkShape(ToolCall, returned, middleware, "beforeToolExecution", "tool call");
    if (next.id !== input.id) {
      throw breach(
        middleware,
        "beforeToolExecution",
        `changed the call id from "${input.id}" to "${next.id}"; preserve call.id.`,
      );
    }
    current = next;
  }
  return current;
}

export async function runAfterToolExecution(
  pipeline: PipelineSnapshot,
  result: ToolResult,
): Promise<ToolResult> {
  let current = result;
  for (const middleware of pipeline.afterToolExecution) {
    const input = current;
    let returned: unknown;
    try {
      returned = await middleware.afterToolExecution?.(input);
    } catch (error) {
      throw thrownBy(middleware, "afterToolExecution", error);
    }
    if (returned === input) continue;
    const next = checkShape(ToolResult, returned, middleware, "afterToolExecution", "tool result");
    if (next.toolCallId !== input.toolCallId) {
      throw breach(
        middleware,
        "afterToolExecution",
        `changed toolCallId from "${input.toolCallId}" to "${next.toolCallId}"; preserve it.`,
      );
    }
    current = next;
  }
  return current;
}
