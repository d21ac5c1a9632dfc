import {
  ProviderError,
  ProviderMissingError,
  RunCancelledError,
  toHarnessError,
} from "../core/errors.js";
import type { ProviderRequest } from "../core/provider.js";
import { ProviderResponse } from "../core/values.js";
import { HookEvent } from "../hooks/events.js";
import type { RunContext, RunMachineEvent } from "../machines/run-machine.js";
import { describeIssues } from "../tools/validate.js";
import { emitContentAsDeltas } from "./emit-content.js";
import { record } from "./record.js";
import { requireRequest } from "./require.js";
import { notify, type RunEnv } from "./run-env.js";

/** Phase `provider`: one model call, streamed when the run streams. */
export async function callProvider(context: RunContext, env: RunEnv): Promise<RunMachineEvent> {
  const provider = env.provider;
  if (provider === undefined) throw new ProviderMissingError();
  const prepared = requireRequest(context);
  const request: ProviderRequest = {
    system: prepared.system,
    messages: prepared.messages,
    tools: prepared.tools,
    model: env.config.model,
    maxTokens: env.config.maxTokens,
    temperature: env.config.temperature,
    stream: env.stream,
    prefixKey: prepared.prefixKey,
  };
  await record(env, context, { type: "llm_request", request });
  await notify(env, HookEvent.LLM_REQUEST, () => ({
    runId: context.runId,
    system: request.system,
    model: request.model,
    maxTokens: request.maxTokens,
    temperature: request.temperature,
    stream: request.stream,
    messageCount: request.messages.length,
    toolCount: request.tools.length,
    prefixKey: request.prefixKey,
  }));

  const started = env.clock.now();
  // With afterLlmCall middleware, deltas wait for the processed response (see afterLlm).
  const live =
    env.emit !== undefined && env.pipeline.afterLlmCall.length === 0 ? env.emit : undefined;
  let response: unknown;
  try {
    if (env.stream && provider.stream) {
      for await (const event of provider.stream(request, { signal: env.signal })) {
        if (event.type === "response") response = event.response;
        else live?.(event);
      }
      if (response === undefined) {
        throw new ProviderError(`Provider "${provider.name}" ended its stream without a response.`);
      }
    } else {
      response = await provider.complete(request, { signal: env.signal });
      if (live) emitContentAsDeltas((response as ProviderResponse).content ?? [], live);
    }
  } catch (error) {
    if (env.signal.aborted) throw new RunCancelledError("provider", error);
    throw toHarnessError(
      error,
      (message, options) =>
        new ProviderError(`Provider "${provider.name}" failed: ${message}`, options),
      "provider",
    );
  }
  const parsed = ProviderResponse.safeParse(response);
  if (!parsed.success) {
    throw new ProviderError(
      `Provider "${provider.name}" returned an invalid response: ${describeIssues(parsed.error.issues)}`,
      { phase: "provider" },
    );
  }
  const durationMs = env.clock.now() - started;
  await record(env, context, { type: "llm_response_raw", response: parsed.data, durationMs });
  return { type: "PROVIDER_RESPONDED", response: parsed.data, durationMs };
}
