import { z } from "zod";
import { ChildRunError, DepthExceededError } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import type { RunResult, RunStatus, ToolResult } from "../core/values.js";
import { type Tool, type ToolContext, tool } from "../tools/tool.js";
import { currentRunFrame, readRunFrames } from "./run-frame.js";

/** What `agent.asTool()` takes. */
export interface AsToolOptions<Schema extends z.ZodType = z.ZodType> {
  /** @defaultValue the agent's `config.name` */
  name?: string;
  description: string;
  /**
   * The call's input: its JSON becomes the child run's input, unless it is the default shape,
   * whose `input` string is the child's input as is.
   * @defaultValue `z.object({ input: z.string() })`
   */
  input?: Schema;
}

/** The default input of an agent used as a tool: one string. */
export const ChildInput = lazySchema(() =>
  z.object({
    input: z.string().describe("What to ask the agent, in full: it sees nothing else."),
  }),
);

/** What an agent used as a tool needs of the agent. */
export interface ChildAgent {
  readonly name: string;
  readonly config: { readonly maxDepth: number };
  run(
    input: string,
    options: { runId: string; sessionId?: string; signal: AbortSignal },
  ): Promise<RunResult<unknown>>;
}

/**
 * The id of the child run a call starts: the parent's run id and the call id, so that a call
 * tried again names the same child.
 */
export const childRunId = (parentRunId: string, toolCallId: string): string =>
  `${parentRunId}.${toolCallId}`;

/** The text a child run is given for a call's input. */
export const childInputText = (input: unknown, usesDefault: boolean): string =>
  usesDefault ? (input as z.output<typeof ChildInput>).input : JSON.stringify(input);

/**
 * A child run's outcome as a call's result: its output (text, or the JSON of a structured
 * output); a child that did not complete throws `ChildRunError` with its code.
 */
export function childOutput(childRunId: string, agent: string, result: RunResult<unknown>): string {
  if (result.status !== "completed") {
    throw new ChildRunError(childRunId, agent, result.status, result.error);
  }
  const output: unknown = result.output;
  if (output === null || output === undefined) return "";
  return typeof output === "string" ? output : JSON.stringify(output);
}

/** A recorded result of an agent tool's call, as its handler gives it again. */
function replayedOutput(recorded: ToolResult): string {
  if (recorded.isError) throw new ReplayedToolError(recorded.content);
  return recorded.content;
}

/** A recorded error result, thrown again: its message is the result's content as recorded. */
class ReplayedToolError extends Error {
  override name = "ReplayedToolError";
}

/** Marks a tool whose calls start child runs of `childAgent` (read by a durable runtime). */
export interface AgentTool<Input> extends Tool<Input> {
  readonly childAgent: string;
  /** True when the input is the default `{ input: string }`. */
  readonly defaultInput: boolean;
}

export function isAgentTool(value: Tool<unknown>): value is AgentTool<unknown> {
  return typeof (value as { childAgent?: unknown }).childAgent === "string";
}

/**
 * A tool that runs `agent` as a child run per call. A direct run runs the child inline, with
 * the child agent's own hooks, middleware and permissions, cancelled with its parent.
 */
export function agentAsTool<Schema extends z.ZodType>(
  agent: ChildAgent,
  options: AsToolOptions<Schema>,
): AgentTool<z.output<Schema>> {
  readRunFrames();
  const defaultInput = options.input === undefined;
  const input = (options.input ?? ChildInput) as Schema;
  const handler = async (value: z.output<Schema>, context: ToolContext): Promise<string> => {
    const parent = currentRunFrame();
    const depth = (parent?.depth ?? 0) + 1;
    const maxDepth = parent?.maxDepth ?? agent.config.maxDepth;
    if (depth > maxDepth) throw new DepthExceededError(depth, maxDepth);
    const runId = childRunId(context.runId, context.toolCallId);
    // A replay of the parent: the child's result is in the recording, the child need not run.
    const recorded = parent?.provider?.recordedToolResult?.(context.toolCallId);
    if (recorded !== undefined) return replayedOutput(recorded);
    // The parent's stream tells of its child runs as a durable parent's events do (SPEC §14).
    const announced = { childRunId: runId, agent: agent.name, toolCallId: context.toolCallId };
    parent?.emit?.({ type: "child_started", ...announced });
    let status: RunStatus | undefined;
    try {
      const result = await agent.run(childInputText(value, defaultInput), {
        runId,
        ...(parent === undefined ? {} : { sessionId: parent.sessionId }),
        signal: context.signal,
      });
      status = result.status;
      return childOutput(runId, agent.name, result);
    } finally {
      status ??= context.signal.aborted ? "cancelled" : "failed";
      parent?.emit?.({ type: "child_finished", ...announced, status });
    }
  };
  const built = tool({
    name: options.name ?? agent.name,
    description: options.description,
    input,
    handler,
    // A child run is a run of its own: a crash of the parent's worker must not start a second.
    recovery: "fail",
  });
  return Object.freeze({ ...built, childAgent: agent.name, defaultInput });
}
