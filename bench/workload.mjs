// The workload shared by every implementation under comparison: a zero-latency scripted model,
// a no-op tool, four identity middleware and three no-op hook observers.
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { tool } from "../dist/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../dist/testing.js";

export const TOOL_NAME = "noop";
export const TOOL_INPUT = Object.freeze({ query: "harnessx" });
export const MIDDLEWARE_COUNT = 4;
export const HOOK_EVENTS = Object.freeze(["TOOL_CALL_START", "TOOL_CALL_END", "LLM_REQUEST"]);

/**
 * How often the middleware stages and hook observers ran, summed over all implementations. The
 * counters let the benchmark check that the hand-written loop does the same work as harnessx;
 * one integer increment is negligible next to an `await`.
 */
export const counters = { middleware: 0, hooks: 0 };

export const resetCounters = () => {
  counters.middleware = 0;
  counters.hooks = 0;
};

/**
 * A run or session id. Node 20's `randomUUID()` returns an unflattened cons string of ~480 heap
 * bytes; harnessx flattens its ids (to ~60 bytes) when it binds them to the run's child logger.
 * The baselines flatten theirs too (`charCodeAt` does), so the heap figures compare runs, not
 * string representations.
 */
export function newId() {
  const id = randomUUID();
  id.charCodeAt(0);
  return id;
}

/** The no-op tool: a one-field input schema (so validation is real) and a handler that returns "ok". */
export const noopTool = tool({
  name: TOOL_NAME,
  description: "Does nothing and answers ok.",
  input: z.object({ query: z.string() }),
  handler: async () => "ok",
});

/** Plain-object middleware overriding all four stages, each returning its input unchanged. */
export function createMiddleware() {
  return Array.from({ length: MIDDLEWARE_COUNT }, () => ({
    async beforeLlmCall(messages, tools) {
      counters.middleware++;
      return [messages, tools];
    },
    async afterLlmCall(response) {
      counters.middleware++;
      return response;
    },
    async beforeToolExecution(call) {
      counters.middleware++;
      return call;
    },
    async afterToolExecution(result) {
      counters.middleware++;
      return result;
    },
  }));
}

/** A no-op hook observer (it only counts). */
export const observeHook = () => {
  counters.hooks++;
};

/**
 * A zero-latency model scripted for runs of `toolIterations` iterations: that many responses
 * requesting one call of the no-op tool, then a final text answer; `loop` replays the script
 * for the next run. Every run of one provider therefore makes `toolIterations + 1` model calls
 * and `toolIterations` tool calls.
 */
export function createProvider(toolIterations) {
  const steps = [];
  for (let index = 1; index <= toolIterations; index++) {
    steps.push(toolCallResponse([{ name: TOOL_NAME, input: TOOL_INPUT, id: `call_${index}` }]));
  }
  steps.push(textResponse("done"));
  return new ScriptedProvider(steps, { loop: true });
}

/**
 * ScriptedProvider keeps every request it receives (for test assertions); a benchmark making
 * hundreds of thousands of calls must drop them after each run, or it measures that list.
 */
export function forgetRequests(provider) {
  provider.requests.length = 0;
}

/** The work one run of `toolIterations` iterations must have done, for the sanity check. */
export function expectedCounts(toolIterations) {
  const providerCalls = toolIterations + 1;
  return {
    // beforeLlmCall and afterLlmCall per provider call, the two tool stages per tool call.
    middleware: MIDDLEWARE_COUNT * (2 * providerCalls + 2 * toolIterations),
    // LLM_REQUEST per provider call, TOOL_CALL_START and TOOL_CALL_END per tool call.
    hooks: providerCalls + 2 * toolIterations,
  };
}
