import type { RunContext, RunMachineEvent } from "../machines/run-machine.js";
import { runBeforeLlmCall } from "../middleware/run-stages.js";
import { prefixKey } from "./prefix-key.js";
import { requireRequest } from "./require.js";
import type { RunEnv } from "./run-env.js";

/** Phase `beforeLlm`: middleware sees the messages and tool schemas, never the system prompt. */
export async function beforeLlm(context: RunContext, env: RunEnv): Promise<RunMachineEvent> {
  const request = requireRequest(context);
  const [messages, tools] = await runBeforeLlmCall(env.pipeline, request.messages, request.tools);
  return {
    type: "LLM_PREPARED",
    messages,
    tools,
    prefixKey: env.config.promptCaching ? prefixKey(request.system, tools) : null,
  };
}
