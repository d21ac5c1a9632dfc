import { assign, not, or, type SnapshotFrom, setup, stateIn } from "xstate";
import { entryById } from "../core/id-record.js";
import type {
  JsonValue,
  Message,
  ProviderResponse,
  RunError,
  ToolResult,
  ToolSchema,
} from "../core/values.js";
import { addUsage, emptyUsage, textOf } from "../core/values.js";
import type { CallState } from "./call-state.js";

// The call's state lives in its own module: the public types need it, but not XState's.
export type { CallState, CallStatus } from "./call-state.js";

export type {
  Decision,
  InterruptedCall,
  PreparedRequest,
  RunContext,
  RunInput,
} from "./run-context.js";

import type {
  Decision,
  InterruptedCall,
  PreparedRequest,
  RunContext,
  RunInput,
} from "./run-context.js";

export type RunMachineEvent =
  | { type: "COMPOSED"; request: PreparedRequest }
  | { type: "LLM_PREPARED"; messages: Message[]; tools: ToolSchema[]; prefixKey: string | null }
  | {
      type: "PROVIDER_RESPONDED";
      response: ProviderResponse;
      durationMs: number;
      /** The API's id for the response, for its `chat` span (not kept in the context). */
      responseId?: string;
    }
  /** `output`: the parsed structured answer of a final response (agents with `config.output`). */
  | { type: "RESPONSE_PROCESSED"; response: ProviderResponse; output?: JsonValue }
  /**
   * A final answer that does not match `config.output`: with `retry`, it goes back to the model
   * with `feedback` (a user message); else the run fails with `error`.
   */
  | {
      type: "OUTPUT_REJECTED";
      response: ProviderResponse;
      feedback: string;
      retry: boolean;
      error: RunError;
    }
  | { type: "CALLS_PREPARED"; calls: CallState[] }
  | { type: "PERMISSIONS_RESOLVED"; calls: CallState[] }
  | { type: "DECIDED"; decisions: Record<string, Decision> }
  | { type: "RECHECKED"; calls: CallState[] }
  | { type: "TOOLS_DISPATCHED"; raw: Record<string, ToolResult> }
  | { type: "INTERRUPTED"; calls: InterruptedCall[] }
  /** `handoff`: the agent a `transfer_to_<name>` call of this turn hands the run to. */
  | { type: "RESULTS_PROCESSED"; results: ToolResult[]; handoff?: string }
  | { type: "FAIL"; error: RunError }
  | { type: "CANCEL"; error: RunError };

/** The phases of the principal sequence, in order. Each names the stage the engine runs there. */
export const PHASES = [
  "compose",
  "beforeLlm",
  "provider",
  "afterLlm",
  "toolValidate",
  "permission",
  "awaitingApproval",
  "permissionRecheck",
  "dispatch",
  "afterTool",
] as const;
export type Phase = (typeof PHASES)[number];
export type FinalPhase = "done" | "failed" | "cancelled";

/** The named effect the engine performs in each working phase (the machine only names it). */
export const STAGE_OF_PHASE = {
  compose: "composeRequest",
  beforeLlm: "runBeforeLlmCall",
  provider: "callProvider",
  afterLlm: "runAfterLlmCall",
  toolValidate: "prepareToolCalls",
  permission: "resolvePermissions",
  permissionRecheck: "recheckPermissions",
  dispatch: "dispatchTools",
  afterTool: "postprocessResults",
} as const satisfies Partial<Record<Phase, string>>;
export type StagePhase = keyof typeof STAGE_OF_PHASE;
export type StageName = (typeof STAGE_OF_PHASE)[StagePhase];

const waitsForPerson = (call: CallState) => call.status === "asked";
/** A call whose handler is to run: allowed by the policy or approved by a person. */
export const runsHandler = (call: CallState): boolean =>
  call.status === "allowed" || call.status === "approved";

/** An interrupted call waits for a person again, one interruption more; others are unchanged. */
const interrupt = (state: CallState, interrupted: InterruptedCall | undefined): CallState => {
  if (interrupted === undefined || !runsHandler(state)) return state;
  const { decidedBy: _previous, ...rest } = state;
  return {
    ...rest,
    status: "asked",
    reason: interrupted.reason,
    inputHash: interrupted.inputHash,
    interruptions: (state.interruptions ?? 0) + 1,
  };
};

const applyDecision = (state: CallState, decision: Decision | undefined): CallState => {
  if (decision === undefined || state.status !== "asked") return state;
  const { inputHash: _bound, approvals, ...rest } = state;
  const decidedBy = decision.by === undefined ? {} : { decidedBy: decision.by };
  if (decision.decision === "respond") {
    return {
      ...rest,
      status: "responded",
      reason: decision.reason ?? "answered by a person",
      ...decidedBy,
      response: {
        toolCallId: state.call.id,
        content: decision.content ?? "",
        isError: decision.isError ?? false,
      },
    };
  }
  if (decision.decision === "deny") {
    return {
      ...rest,
      status: "rejected",
      reason: decision.reason ?? "denied by a reviewer",
      ...decidedBy,
    };
  }
  let input = decision.input;
  if (approvals !== undefined && decision.quorumMet !== true) {
    const hash = decision.inputHash ?? state.inputHash ?? "";
    const given = [
      ...approvals.given,
      {
        by: decision.by ?? "",
        at: decision.at ?? 0,
        reason: decision.reason ?? null,
        inputHash: hash,
        ...(decision.input === undefined ? {} : { input: decision.input }),
      },
    ];
    // An edit counts only with approvals of the same input.
    const agreeing = given.filter((each) => each.inputHash === hash);
    if (agreeing.length < approvals.needed) {
      return { ...state, approvals: { needed: approvals.needed, given } };
    }
    input = agreeing.find((each) => each.input !== undefined)?.input;
  }
  return {
    ...rest,
    call: input === undefined ? state.call : { ...state.call, input },
    status: "approved",
    reason: decision.reason ?? "approved",
    ...decidedBy,
  };
};

/** The calls once `decisions` are applied. */
const decided = (calls: readonly CallState[], decisions: Record<string, Decision>) =>
  calls.map((each) => applyDecision(each, entryById(decisions, each.call.id)));

const maxIterationsError = (maxIterations: number): RunError => ({
  name: "MaxIterationsError",
  code: "max_iterations",
  message: `The run reached maxIterations (${maxIterations}) and the model still requested tools.`,
  phase: "afterTool",
});

const finished = or([stateIn("done"), stateIn("failed"), stateIn("cancelled")]);

/**
 * One run as a state machine whose states follow the principal sequence. It decides what
 * comes next and keeps the run's data; it performs no effect. The engine runs the stage named
 * by `STAGE_OF_PHASE` for the current state and sends the stage's outcome as an event.
 */
/**
 * The context fields of a run between stages, as it starts (fresh objects each call): stored
 * documents leave out the ones still holding these values.
 */
export const idleStageContext = () =>
  ({
    request: null,
    response: null,
    responseMs: 0,
    calls: [],
    raw: {},
    output: null,
    error: null,
  }) satisfies Partial<RunContext>;

// Built on first use, not at import: creating it is most of what XState costs at `import
// "harnessx"` (SPEC §15), and a process that never runs an agent never pays it.
const buildRunMachine = () =>
  setup({
    types: {
      context: {} as RunContext,
      events: {} as RunMachineEvent,
      input: {} as RunInput,
    },
    guards: {
      hasToolCalls: ({ event }) =>
        event.type === "RESPONSE_PROCESSED" && event.response.toolCalls.length > 0,
      hasPendingApprovals: ({ event }) =>
        (event.type === "PERMISSIONS_RESOLVED" || event.type === "RECHECKED") &&
        event.calls.some(waitsForPerson),
      stillAwaiting: ({ context, event }) =>
        event.type === "DECIDED" && decided(context.calls, event.decisions).some(waitsForPerson),
      underMaxIterations: ({ context }) => context.iteration < context.maxIterations,
      retriesOutput: ({ context, event }) =>
        event.type === "OUTPUT_REJECTED" &&
        event.retry &&
        context.iteration < context.maxIterations,
      interruptsACall: ({ context, event }) =>
        event.type === "INTERRUPTED" &&
        event.calls.some((interrupted) =>
          context.calls.some(
            (each) => each.call.id === interrupted.toolCallId && runsHandler(each),
          ),
        ),
    },
    actions: {
      fail: assign({
        error: ({ event }) =>
          event.type === "FAIL" || event.type === "CANCEL" ? event.error : null,
        request: null,
        response: null,
      }),
    },
  }).createMachine({
    id: "run",
    context: ({ input }) => ({
      runId: input.runId,
      sessionId: input.sessionId,
      maxIterations: input.maxIterations,
      iteration: 0,
      messageCount: input.messageCount,
      usage: emptyUsage(),
      stopReason: null,
      ...(input.agent === undefined ? {} : { agent: input.agent }),
      ...idleStageContext(),
    }),
    initial: "compose",
    on: {
      // Final states keep their outcome: a late FAIL or CANCEL (pure `transition`) changes nothing.
      FAIL: { guard: not(finished), target: ".failed", actions: "fail" },
      CANCEL: { guard: not(finished), target: ".cancelled", actions: "fail" },
    },
    states: {
      compose: {
        on: {
          COMPOSED: {
            target: "beforeLlm",
            actions: assign({
              request: ({ event }) => event.request,
              iteration: ({ context }) => context.iteration + 1,
            }),
          },
        },
      },
      beforeLlm: {
        on: {
          LLM_PREPARED: {
            target: "provider",
            actions: assign({
              request: ({ context, event }) =>
                context.request && {
                  ...context.request,
                  messages: event.messages,
                  tools: event.tools,
                  prefixKey: event.prefixKey,
                },
            }),
          },
        },
      },
      provider: {
        on: {
          PROVIDER_RESPONDED: {
            target: "afterLlm",
            // The request is spent: nothing after the provider reads it, and a durable run's
            // save after the response then holds no second copy of the conversation.
            actions: assign({
              response: ({ event }) => event.response,
              responseMs: ({ event }) => event.durationMs,
              stopReason: ({ event }) => event.response.stopReason,
              request: null,
            }),
          },
        },
      },
      afterLlm: {
        on: {
          RESPONSE_PROCESSED: [
            {
              guard: "hasToolCalls",
              target: "toolValidate",
              actions: assign({
                messageCount: ({ context }) => context.messageCount + 1,
                usage: ({ context, event }) => addUsage(context.usage, event.response.usage),
                response: ({ event }) => event.response,
                request: null,
              }),
            },
            {
              target: "done",
              actions: assign({
                messageCount: ({ context }) => context.messageCount + 1,
                usage: ({ context, event }) => addUsage(context.usage, event.response.usage),
                output: ({ event }) => event.output ?? textOf(event.response.content),
                response: null,
                request: null,
              }),
            },
          ],
          OUTPUT_REJECTED: [
            {
              guard: "retriesOutput",
              target: "compose",
              actions: assign({
                // The answer and the feedback (messagesAddedBy).
                messageCount: ({ context }) => context.messageCount + 2,
                usage: ({ context, event }) => addUsage(context.usage, event.response.usage),
                outputFailures: ({ context }) => (context.outputFailures ?? 0) + 1,
                response: null,
                request: null,
              }),
            },
            {
              target: "failed",
              actions: assign({
                messageCount: ({ context }) => context.messageCount + 1,
                usage: ({ context, event }) => addUsage(context.usage, event.response.usage),
                outputFailures: ({ context }) => (context.outputFailures ?? 0) + 1,
                error: ({ event }) => event.error,
                response: null,
                request: null,
              }),
            },
          ],
        },
      },
      toolValidate: {
        on: {
          CALLS_PREPARED: {
            target: "permission",
            actions: assign({ calls: ({ event }) => event.calls, response: null }),
          },
        },
      },
      permission: {
        on: {
          PERMISSIONS_RESOLVED: [
            {
              guard: "hasPendingApprovals",
              target: "awaitingApproval",
              actions: assign({ calls: ({ event }) => event.calls }),
            },
            { target: "permissionRecheck", actions: assign({ calls: ({ event }) => event.calls }) },
          ],
        },
      },
      awaitingApproval: {
        on: {
          DECIDED: [
            {
              guard: "stillAwaiting",
              actions: assign({
                calls: ({ context, event }) => decided(context.calls, event.decisions),
              }),
            },
            {
              target: "permissionRecheck",
              actions: assign({
                calls: ({ context, event }) => decided(context.calls, event.decisions),
              }),
            },
          ],
        },
      },
      permissionRecheck: {
        on: {
          RECHECKED: [
            {
              guard: "hasPendingApprovals",
              target: "awaitingApproval",
              actions: assign({ calls: ({ event }) => event.calls }),
            },
            { target: "dispatch", actions: assign({ calls: ({ event }) => event.calls }) },
          ],
        },
      },
      dispatch: {
        on: {
          TOOLS_DISPATCHED: {
            target: "afterTool",
            actions: assign({ raw: ({ context, event }) => ({ ...context.raw, ...event.raw }) }),
          },
          // Durable runs: a crash interrupted handlers whose tools' recovery is `ask`.
          INTERRUPTED: {
            guard: "interruptsACall",
            target: "awaitingApproval",
            actions: assign({
              calls: ({ context, event }) =>
                context.calls.map((each) =>
                  interrupt(
                    each,
                    event.calls.find((interrupted) => interrupted.toolCallId === each.call.id),
                  ),
                ),
            }),
          },
        },
      },
      afterTool: {
        on: {
          RESULTS_PROCESSED: [
            {
              guard: "underMaxIterations",
              target: "compose",
              actions: assign({
                messageCount: ({ context }) => context.messageCount + 1,
                calls: [],
                raw: {},
                agent: ({ context, event }) => event.handoff ?? context.agent,
              }),
            },
            {
              target: "failed",
              actions: assign({
                messageCount: ({ context }) => context.messageCount + 1,
                calls: [],
                raw: {},
                error: ({ context }) => maxIterationsError(context.maxIterations),
              }),
            },
          ],
        },
      },
      done: { type: "final" },
      failed: { type: "final" },
      cancelled: { type: "final" },
    },
  });

export type RunMachine = ReturnType<typeof buildRunMachine>;

let built: RunMachine | undefined;

/** The run machine, built once, on the first call. */
export const runMachine = (): RunMachine => {
  built ??= buildRunMachine();
  return built;
};

/**
 * The messages an event may add to the conversation, in order: the model's answer, the
 * feedback on a rejected structured answer, or the tool results of an iteration. The machine
 * only counts them (`messageCount`); the engine appends as many as the count grew by to the
 * run's log (a rejected answer that fails the run adds the answer alone).
 */
export function messagesAddedBy(event: RunMachineEvent): Message[] {
  switch (event.type) {
    case "RESPONSE_PROCESSED":
      return [{ role: "assistant", content: event.response.content }];
    case "OUTPUT_REJECTED":
      return [
        { role: "assistant", content: event.response.content },
        { role: "user", content: [{ type: "text", text: event.feedback }] },
      ];
    case "RESULTS_PROCESSED":
      return [toolMessage(event.results)];
    default:
      return [];
  }
}
const toolMessage = (results: readonly ToolResult[]): Message => ({
  role: "tool",
  content: results.map((result) => ({
    type: "tool_result",
    toolCallId: result.toolCallId,
    content: result.content,
    isError: result.isError,
  })),
});

/** A snapshot of the run machine, as an actor of it or `transition` gives it. */
export type RunSnapshot = SnapshotFrom<RunMachine>;
