import type { RunContext, RunMachineEvent, StageName } from "../machines/run-machine.js";
import { requestedModel, traceChat } from "../observability/spans.js";
import { afterLlm } from "./after-llm.js";
import { beforeLlm } from "./before-llm.js";
import { callProvider } from "./call-provider.js";
import { composeRequest } from "./compose-request.js";
import { dispatchTools } from "./dispatch-tools.js";
import { postprocessResults } from "./postprocess-results.js";
import { prepareToolCalls } from "./prepare-tool-calls.js";
import type { ProviderCallDeferred } from "./provider-gate.js";
import { recheckPermissions, resolvePermissions } from "./resolve-permissions.js";
import type { RunEnv } from "./run-env.js";

/** A stage's outcome: the event for the machine, or (the provider stage's) a deferred call. */
export type StageOutcome = RunMachineEvent | ProviderCallDeferred;

export type Stage = (context: RunContext, env: RunEnv) => Promise<StageOutcome>;

/** The engine's implementation of each effect the run machine names. */
export const STAGES: Record<StageName, Stage> = {
  composeRequest,
  runBeforeLlmCall: beforeLlm,
  callProvider: (context, env) =>
    traceChat(
      {
        provider: env.provider?.name,
        serverAddress: env.provider?.serverAddress,
        model: requestedModel(env.config.model, env.provider),
        maxTokens: env.config.maxTokens,
        temperature: env.config.temperature,
      },
      () => callProvider(context, env),
      (event) =>
        event.type === "PROVIDER_RESPONDED"
          ? { response: event.response, id: event.responseId }
          : undefined,
    ),
  runAfterLlmCall: afterLlm,
  prepareToolCalls,
  resolvePermissions,
  recheckPermissions,
  dispatchTools,
  postprocessResults,
};
