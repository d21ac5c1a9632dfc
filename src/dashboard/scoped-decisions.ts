import type { Message } from "../core/values.js";
import type { AgentRuntime } from "../runtime/agent-runtime.js";
import type { Caller } from "./auth.js";
import { HttpError } from "./http-errors.js";

/**
 * Refuses (403 `forbidden`) a decision a scoped token may not take: the call's tool or the
 * run's agent is outside the token's globs. An unscoped token costs nothing here. A call the
 * run never made is left for the runtime to refuse (404), once the agent is in scope.
 */
export async function requireMayDecide(
  runtime: AgentRuntime,
  caller: Caller,
  runId: string,
  toolCallId: string,
): Promise<void> {
  const { scope } = caller;
  if (scope === undefined) return;
  const run = await runtime.get(runId);
  // A call's tool never changes: the pending list has it, or the conversation's request does.
  const tool =
    run.pending.find((call) => call.toolCallId === toolCallId)?.name ??
    requestedTool(run.messages, toolCallId);
  const allowed = tool === undefined ? scope.allowsAgent(run.agent) : scope.allows(run.agent, tool);
  if (allowed) return;
  throw new HttpError(
    403,
    "forbidden",
    `Token "${caller.name}" may not decide ${tool === undefined ? "calls" : `"${tool}" calls`} of agent "${run.agent}".`,
  );
}

function requestedTool(messages: readonly Message[], toolCallId: string): string | undefined {
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === "tool_use" && block.id === toolCallId) return block.name;
    }
  }
  return undefined;
}
