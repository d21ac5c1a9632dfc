import { HookEvent } from "../hooks/events.js";
import type { RunContext, RunMachineEvent } from "../machines/run-machine.js";
import { composeSystemPrompt } from "./compose-prompt.js";
import { record } from "./record.js";
import { notify, type RunEnv } from "./run-env.js";
import { conversationTokens, trimContext } from "./trim-context.js";

/** Phase `compose`: the system prompt and the trimmed conversation for the next provider call. */
export async function composeRequest(context: RunContext, env: RunEnv): Promise<RunMachineEvent> {
  if (context.iteration === 0 && env.recorder !== undefined) {
    const { sessionId } = context;
    const input = env.conversation.slice(0, context.messageCount);
    await record(env, context, { type: "run_start", sessionId, agent: env.config.name, input });
  }
  const hookedLoopIterationStart = notify(env, HookEvent.LOOP_ITERATION_START, () => ({
    runId: context.runId,
    iteration: context.iteration + 1,
  }));
  if (hookedLoopIterationStart !== undefined) await hookedLoopIterationStart;
  const system =
    env.promptProviders.length === 0
      ? env.config.systemPrompt
      : await composeSystemPrompt(env.config.systemPrompt, env.promptProviders, context);
  return {
    type: "COMPOSED",
    request: {
      system,
      // A copy: the request is the model's, and the run's log goes on growing after it.
      messages: trimContext(
        env.conversation.slice(0, context.messageCount),
        env.config.contextWindow,
        conversationTokens(env.conversation, context.messageCount),
      ),
      tools: env.tools.schemas(),
      prefixKey: null,
    },
  };
}
