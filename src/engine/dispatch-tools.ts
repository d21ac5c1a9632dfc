import { loggableError, toRunError } from "../core/errors.js";
import { entryById, recordById } from "../core/id-record.js";
import type { ToolCall, ToolResult } from "../core/values.js";
import { withinRun } from "../extensions/run-scope.js";
import { HookEvent } from "../hooks/events.js";
import {
  type CallState,
  type RunContext,
  type RunMachineEvent,
  runsHandler,
} from "../machines/run-machine.js";
import { traceTool } from "../observability/spans.js";
import { capToolResult, DEFAULT_TOOL_LIMITS } from "../tools/result-limit.js";
import { errorResult, runHandler } from "../tools/run-handler.js";
import type { Tool } from "../tools/tool.js";
import { validateInput } from "../tools/validate.js";
import { isAgentTool } from "./as-tool.js";
import { record } from "./record.js";
import { notify, type RunEnv } from "./run-env.js";

/** What running a call reads of the run's machine context. */
export type CallContext = Pick<RunContext, "runId" | "iteration">;

/** A call ready to run: its tool here, and its input as the tool's schema parsed it. */
export interface PreparedCall {
  call: ToolCall;
  tool: Tool;
  input: unknown;
}

/**
 * The call's tool and validated input, or the error result of a call no tool here can run
 * (validated in toolValidate; checked again because a durable run may resume on another
 * process).
 */
export function prepareCall(state: CallState, env: RunEnv): PreparedCall | ToolResult {
  const { call } = state;
  const tool = env.tools.get(call.name);
  const input = tool && validateInput(tool.input, call.input);
  if (!tool || !input?.ok)
    return errorResult(call.id, `Tool "${call.name}" is not available here.`);
  return { call, tool, input: input.value };
}

/** Executes one permitted call's handler and returns its raw outcome (before result middleware). */
export async function executeCall(
  context: CallContext,
  state: CallState,
  env: RunEnv,
): Promise<ToolResult> {
  const prepared = prepareCall(state, env);
  return "tool" in prepared ? runPrepared(context, prepared, env) : prepared;
}

/** Runs a prepared call's handler (`prepareCall`) and returns its raw outcome. */
export async function runPrepared(
  context: CallContext,
  prepared: PreparedCall,
  env: RunEnv,
): Promise<ToolResult> {
  const { call, tool: found, input } = prepared;
  const hookedToolCallStart = notify(env, HookEvent.TOOL_CALL_START, () => ({
    runId: context.runId,
    toolCall: call,
  }));
  if (hookedToolCallStart !== undefined) await hookedToolCallStart;
  env.emit?.({ type: "tool_start", toolCall: call });
  const {
    result: whole,
    error,
    thrown,
  } = await traceTool(call, () =>
    withinRun(env.runScope, () =>
      runHandler(
        found,
        input,
        {
          signal: env.signal,
          runId: context.runId,
          toolCallId: call.id,
          ...(env.sandbox === undefined ? {} : { sandbox: env.sandbox }),
        },
        { timeoutMs: found.timeoutMs ?? env.config.toolTimeoutMs, timer: env.timer },
      ),
    ),
  );
  // Cut to the limit as it leaves the handler, in direct runs as in durable ones.
  const result = capToolResult(whole, (env.limits ?? DEFAULT_TOOL_LIMITS).maxToolResultBytes);
  // An agent tool's result is recorded as the run takes it in (`postprocessResults`), as on a runtime.
  if (env.recorder !== undefined && !isAgentTool(found)) {
    await record(env, context, { type: "tool_result_raw", toolCall: call, result });
  }
  if (error !== undefined) {
    // Only the thrown value's name, message and stack: an SDK error may carry request headers.
    env.logger.debug(
      { err: loggableError(thrown ?? error), tool: call.name, toolCallId: call.id },
      error.code === "tool_timeout" ? "tool handler timed out" : "tool handler threw",
    );
    const hookedError = notify(env, HookEvent.ERROR, () => ({
      runId: context.runId,
      error: toRunError(error),
      phase: "dispatch",
    }));
    if (hookedError !== undefined) await hookedError;
  }
  return result;
}

/** The answers people gave in place of tools (`respond`): raw results no handler produced. */
export const personResponses = (calls: readonly CallState[]): ToolResult[] =>
  calls.flatMap((state) =>
    state.status === "responded" && state.response !== undefined ? [state.response] : [],
  );

/** Phase `dispatch`: runs every permitted call whose raw result is not committed yet, concurrently. */
export async function dispatchTools(context: RunContext, env: RunEnv): Promise<RunMachineEvent> {
  const todo = context.calls.filter(
    (state) => runsHandler(state) && entryById(context.raw, state.call.id) === undefined,
  );
  const results = await Promise.all(todo.map((state) => executeCall(context, state, env)));
  const raw = recordById(
    [...results, ...personResponses(context.calls)].map(
      (result) => [result.toolCallId, result] as const,
    ),
  );
  return { type: "TOOLS_DISPATCHED", raw };
}
