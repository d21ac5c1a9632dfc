import { type DeadlineScope, withDeadline } from "../core/deadline.js";
import {
  HarnessError,
  ProviderError,
  ProviderMissingError,
  RunCancelledError,
  toHarnessError,
} from "../core/errors.js";
import { jsonProblem, MAX_JSON_DEPTH } from "../core/json-value.js";
import type {
  Provider,
  ProviderCallOptions,
  ProviderRequest,
  ProviderStreamEvent,
} from "../core/provider.js";
import { ProviderResponse } from "../core/values.js";
import { HookEvent } from "../hooks/events.js";
import type { RunContext, RunMachineEvent } from "../machines/run-machine.js";
import { capToolInputs } from "../tools/input-limit.js";
import { DEFAULT_TOOL_LIMITS } from "../tools/result-limit.js";
import { describeIssues } from "../tools/validate.js";
import { emitContentAsDeltas } from "./emit-content.js";
import { logProviderFailure, scrubbedProviderError } from "./provider-failure.js";
import type { ProviderCallDeferred } from "./provider-gate.js";
import { record } from "./record.js";
import { requireRequest } from "./require.js";
import { notify, type RunEnv } from "./run-env.js";
import type { RunEvent } from "./run-events.js";
import { outputFormatOf } from "./structured-output.js";

const isRateLimited = (error: unknown): error is ProviderError =>
  HarnessError.isHarnessError(error) && error.code === "rate_limited";

/**
 * Phase `provider`: one model call, streamed when the run streams. A call the run's provider
 * gate defers is not made: the stage returns the deferral instead of a machine event.
 */
export async function callProvider(
  context: RunContext,
  env: RunEnv,
): Promise<RunMachineEvent | ProviderCallDeferred> {
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
  const output = outputFormatOf(env.config.output);
  if (output !== undefined) request.output = output;
  if (env.providerGate !== undefined) {
    const deferral = await env.providerGate.admit(request, env.signal);
    if (deferral !== undefined) return { type: "PROVIDER_DEFERRED", deferral };
  }
  if (env.recorder !== undefined) await record(env, context, { type: "llm_request", request });
  const hookedLlmRequest = notify(env, HookEvent.LLM_REQUEST, () => ({
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
  if (hookedLlmRequest !== undefined) await hookedLlmRequest;
  // Not awaited here: a run held at its model call keeps no frame of this function alive.
  return ask(context, env, provider, request);
}

/** The call itself, past its gate and hooks: its answer as the machine's event. */
function ask(
  context: RunContext,
  env: RunEnv,
  provider: Provider,
  request: ProviderRequest,
): Promise<RunMachineEvent | ProviderCallDeferred> {
  const started = env.clock.now();
  // With afterLlmCall middleware, deltas wait for the processed response (see afterLlm).
  const live =
    env.emit !== undefined && env.pipeline.afterLlmCall.length === 0 ? env.emit : undefined;
  const timeoutMs = env.config.providerTimeoutMs;
  const timedOut = () =>
    new ProviderError(
      `Provider "${provider.name}" did not answer within ${timeoutMs} ms (config.providerTimeoutMs).`,
      { code: "timeout" },
    );
  return withDeadline(
    (scope) =>
      env.stream && provider.stream
        ? streamed(provider.stream(request, callOptions(scope)), scope, live, provider.name)
        : answered(provider.complete(request, callOptions(scope)), scope, live),
    { ms: timeoutMs, signal: env.signal, timer: env.timer, reason: timedOut },
  ).then<RunMachineEvent | ProviderCallDeferred, ProviderCallDeferred>(
    (outcome) =>
      outcome.expired
        ? notAnswered(context, env, provider, timedOut())
        : responded(context, env, provider, outcome.value, started),
    (error: unknown) => notAnswered(context, env, provider, error),
  );
}

/**
 * A call that failed or timed out: a cancelled run's, the run's cancel; a rate_limited answer
 * pauses the model and defers the call (or fails the run once its wait is spent).
 */
async function notAnswered(
  context: RunContext,
  env: RunEnv,
  provider: Provider,
  error: unknown,
): Promise<ProviderCallDeferred> {
  if (env.signal.aborted) throw new RunCancelledError("provider");
  if (env.providerGate !== undefined && isRateLimited(error)) {
    return { type: "PROVIDER_DEFERRED", deferral: await env.providerGate.rateLimited(error) };
  }
  throw failed(
    context,
    env,
    provider,
    toHarnessError(
      error,
      (message, options) =>
        new ProviderError(`Provider "${provider.name}" failed: ${message}`, options),
      "provider",
    ),
  );
}

/** The provider's answer, checked, as the machine's `PROVIDER_RESPONDED`. */
async function responded(
  context: RunContext,
  env: RunEnv,
  provider: Provider,
  response: unknown,
  started: number,
): Promise<RunMachineEvent> {
  const parsed = ProviderResponse.safeParse(response);
  if (!parsed.success) {
    throw failed(
      context,
      env,
      provider,
      new ProviderError(
        `Provider "${provider.name}" returned an invalid response: ${describeIssues(parsed.error.issues)}`,
        { phase: "provider" },
      ),
    );
  }
  // The response is stored, hashed and sent back: it must be plain JSON data, not too deep.
  const problem = responseJsonProblem(parsed.data);
  if (problem !== undefined) {
    throw failed(
      context,
      env,
      provider,
      new ProviderError(`Provider "${provider.name}" returned a response that ${problem}.`, {
        phase: "provider",
      }),
    );
  }
  // The response's id is for its `chat` span only: the run does not store it.
  const { id: responseId, ...answer } = parsed.data;
  // An oversized tool input goes no further than here: not to middleware, record or recording.
  const taken = capToolInputs(answer, (env.limits ?? DEFAULT_TOOL_LIMITS).maxToolInputBytes);
  const durationMs = env.clock.now() - started;
  if (env.providerGate !== undefined) await env.providerGate.spent(taken);
  if (env.recorder !== undefined) {
    await record(env, context, { type: "llm_response_raw", response: taken, durationMs });
  }
  return {
    type: "PROVIDER_RESPONDED",
    response: taken,
    durationMs,
    ...(responseId === undefined ? {} : { responseId }),
  };
}

/** Every failure of the call is scrubbed and logged once, wherever it is found. */
function failed(
  context: RunContext,
  env: RunEnv,
  provider: Provider,
  error: HarnessError,
): HarnessError {
  const failure = scrubbedProviderError(error);
  logProviderFailure(env.logger, failure, {
    agent: env.config.name,
    runId: context.runId,
    provider: provider.name,
  });
  return failure;
}

/**
 * What the provider is given: the call's signal, read through (made only if the provider reads
 * it: see `DeadlineScope`). An own property, so that a provider spreading it passes it on.
 */
const callOptions = (scope: DeadlineScope): ProviderCallOptions => ({
  get signal() {
    return scope.signal;
  },
});

/**
 * One unstreamed call. No async function: a held call keeps every suspended frame on its way
 * alive for as long as the provider takes (see bench/runtime-memory.mjs).
 */
function answered(
  call: Promise<ProviderResponse>,
  scope: DeadlineScope,
  live: ((event: RunEvent) => void) | undefined,
): Promise<unknown> {
  // A provider's own promise as it is (a value from a provider that returned no promise, wrapped).
  const answer = Promise.resolve(call);
  if (live === undefined) return answer;
  return answer.then((response) => {
    if (!scope.aborted) emitContentAsDeltas(response.content ?? [], live);
    return response;
  });
}

/** One streamed call: deltas go `live` as they come; resolves with the final response. */
async function streamed(
  events: AsyncIterable<ProviderStreamEvent>,
  scope: DeadlineScope,
  live: ((event: RunEvent) => void) | undefined,
  providerName: string,
): Promise<unknown> {
  let response: unknown;
  for await (const event of events) {
    // A provider that ignores its signal is no longer heard once the call timed out.
    if (scope.aborted) break;
    if (event.type === "response") response = event.response;
    else live?.(event);
  }
  if (scope.aborted) scope.signal.throwIfAborted();
  if (response === undefined) {
    throw new ProviderError(`Provider "${providerName}" ended its stream without a response.`);
  }
  return response;
}

// Where tool inputs sit in a response: response → content or toolCalls → block or call → input.
const INPUT_NESTED_IN = 3;

/**
 * `jsonProblem` of a parsed response. Zod built every object and array of it and checked every
 * value but the tool inputs' (`z.unknown()`), so only those are walked, each at its depth.
 */
function responseJsonProblem(response: ProviderResponse): string | undefined {
  for (const block of response.content) {
    if (block.type !== "tool_use") continue;
    const problem = jsonProblem(block.input, MAX_JSON_DEPTH, INPUT_NESTED_IN);
    if (problem !== undefined) return problem;
  }
  for (const call of response.toolCalls) {
    const problem = jsonProblem(call.input, MAX_JSON_DEPTH, INPUT_NESTED_IN);
    if (problem !== undefined) return problem;
  }
  return undefined;
}
