import { loggableError } from "../core/errors.js";
import { type AgentTool, childInputText, childRunId, isAgentTool } from "../engine/as-tool.js";
import { prepareCall } from "../engine/dispatch-tools.js";
import { recheckPermissions } from "../engine/resolve-permissions.js";
import type { RunEnv } from "../engine/run-env.js";
import type { CallState } from "../machines/call-state.js";
import { runsHandler } from "../machines/run-machine.js";
import { injectTraceContext } from "../observability/propagation.js";
import { traceChildStart } from "../observability/spans.js";
import type { RunLink } from "../store/run-tree.js";
import type { RunRecord } from "../store/schemas.js";
import { toolJobsFor } from "./step-saves.js";
import { agentFor, type WorkerDeps } from "./worker-deps.js";

/** The parent run a call starts a child from: its id, first agent and current iteration. */
export interface ParentOfCall {
  runId: string;
  /** The agent the run was submitted for (its `maxDepth` bounds the tree). */
  agent: string;
  iteration: number;
}

/** The depth a call's child would have, over the parent's `maxDepth`. */
export interface TooDeep {
  depth: number;
  maxDepth: number;
}

/**
 * The link of the child run that call `callId` of `agentTool` starts under `parent` (whose own
 * link is `parentLink`; none for a root), or the depth it would exceed. The child's id is
 * derived from the parent's run id and the call's, so every delivery builds the same link.
 */
export function childLinkOf(
  deps: WorkerDeps,
  parent: ParentOfCall,
  parentLink: RunLink | undefined,
  callId: string,
  agentTool: AgentTool<unknown>,
): RunLink | TooDeep {
  const depth = (parentLink?.depth ?? 0) + 1;
  const { maxDepth } = agentFor(deps, parent.agent, parent.runId).config;
  if (depth > maxDepth) return { depth, maxDepth };
  return {
    runId: childRunId(parent.runId, callId),
    agent: agentTool.childAgent,
    parentRunId: parent.runId,
    parentToolCallId: callId,
    parentIteration: parent.iteration,
    rootRunId: parentLink?.rootRunId ?? parent.runId,
    depth,
    createdAt: deps.clock.now(),
  };
}

/** The children of a turn as the step entering dispatch recorded them (`waitForTurnChildren`). */
export interface TurnChildren {
  /** The turn's calls left to tool jobs: all but the children this step starts itself. */
  toolCalls: readonly CallState[];
  /**
   * Starts the children the step keeps, in one bulk submit, once the dispatch save is applied
   * (a save refused, or a crash before it, starts none: the step runs again). Their children
   * failing to start, their calls go to tool jobs like any other. Rejects when the children
   * were not recorded: the step fails as if it crashed after its save, and the step that
   * opens the run at dispatch again hands their calls to tool jobs, which link each child.
   */
  start(): Promise<void>;
}

/** What a turn's children need of the step: its lease, its run as it stands, its environment. */
export interface TurnStep {
  token: number;
  record: RunRecord;
  iteration: number;
  env: RunEnv;
}

/**
 * Records the children the calls of a turn start (its agent-tool calls) on the parent, in one
 * write fenced by the step's lease token, before the turn's tool jobs are queued: so no child
 * can finish before its siblings count, and the last one to finish is the one that wakes the
 * parent (SPEC §14). Undefined when the turn starts no child; else the parent waits for them
 * (status `waiting`). A call over `maxDepth` starts none (its tool job answers
 * `depth_exceeded`), nor does any call where children cannot start (no `submitChild`).
 *
 * The children whose calls the policy still allows now (the re-check a tool job makes at
 * dispatch, made here) and whose input parses are started by the step itself after its save,
 * in one bulk write, instead of one tool job each; the others go to tool jobs.
 */
export async function waitForTurnChildren(
  deps: WorkerDeps,
  step: TurnStep,
  calls: readonly CallState[],
): Promise<TurnChildren | undefined> {
  const { env } = step;
  const parent: ParentOfCall = {
    runId: step.record.runId,
    agent: step.record.agent,
    iteration: step.iteration,
  };
  if (deps.submitChild === undefined) return undefined;
  const agentCalls = calls.flatMap((state) => {
    const tool = env.tools.get(state.call.name);
    return tool !== undefined && isAgentTool(tool) ? [{ state, tool }] : [];
  });
  if (agentCalls.length === 0) return undefined;
  const parentLink = await linkOfRun(deps, step.record);
  const linked = agentCalls.flatMap(({ state, tool }) => {
    const link = childLinkOf(deps, parent, parentLink, state.call.id, tool);
    return "runId" in link ? [{ state, link }] : [];
  });
  if (linked.length === 0) return undefined;
  // Not waited for here: the dispatch save goes right behind it, and is applied after it (and
  // refused with it: same fence), one round trip for both. Waited for before any child starts.
  const recorded = deps.backend.waitForChildren(
    parent.runId,
    step.token,
    linked.map(({ link }) => link),
  );
  // Its failure is the step's: thrown by the save refused with it, else by `start`.
  recorded.catch(() => {});
  const direct = await startable(deps, step, linked);
  const started = new Set(direct.map(({ state }) => state.call.id));
  return {
    toolCalls: calls.filter((state) => !started.has(state.call.id)),
    start: async () => {
      await recorded;
      await startDirect(deps, step, direct);
    },
  };
}

/**
 * The link of the run `record`, read from the tree only for a child: a run whose record names
 * no parent is a root (every child run is stored with its `parentRunId`: `runtimeWorkerDeps`),
 * so a root's step and finish read nothing for it.
 */
export async function linkOfRun(deps: WorkerDeps, record: RunRecord): Promise<RunLink | undefined> {
  return record.parentRunId === undefined ? undefined : deps.backend.linkOf(record.runId, record);
}

interface DirectChild {
  state: CallState;
  link: RunLink;
  input: string;
}

/** Of the turn's linked children, those the step may start itself (see `waitForTurnChildren`). */
async function startable(
  deps: WorkerDeps,
  step: TurnStep,
  linked: ReadonlyArray<{ state: CallState; link: RunLink }>,
): Promise<DirectChild[]> {
  if (deps.submitChildren === undefined) return [];
  const { record, iteration, env } = step;
  const rechecked = await recheckPermissions(
    { runId: record.runId, iteration, calls: linked.map(({ state }) => state) },
    env,
    { personDecisionsRecorded: true },
  );
  if (rechecked.type !== "RECHECKED") return [];
  return linked.flatMap(({ link }, at) => {
    const checked = rechecked.calls[at];
    if (checked === undefined || checked.result !== undefined || !runsHandler(checked)) return [];
    const prepared = prepareCall(checked, env);
    if (!("tool" in prepared) || !isAgentTool(prepared.tool)) return [];
    const input = childInputText(checked.call.input, prepared.tool.defaultInput);
    return [{ state: checked, link, input }];
  });
}

async function startDirect(
  deps: WorkerDeps,
  step: TurnStep,
  direct: readonly DirectChild[],
): Promise<void> {
  if (direct.length === 0 || deps.submitChildren === undefined) return;
  const { record, iteration } = step;
  const options = {
    sessionId: record.sessionId,
    ...(record.priority === undefined ? {} : { priority: record.priority }),
  };
  // Each child starts in its call's execute_tool span, as one a tool job starts does.
  const children = await Promise.all(
    direct.map(async ({ state, link, input }) => ({
      link,
      input,
      options: {
        ...options,
        ...(await traceChildStart(state.call, async () => traceOfChild(record.trace))),
      },
    })),
  );
  try {
    // Each child it stores is told on the parent's log (`child_started`) in the same write.
    await deps.submitChildren(children);
  } catch (error) {
    // Refused (say, one input too big): each call's tool job starts its child, or fails it.
    deps.logger.warn(
      { runId: record.runId, err: loggableError(error) },
      "the children of a turn could not start together; their tool jobs start them",
    );
    const jobs = toolJobsFor(
      record,
      iteration,
      direct.map(({ state }) => state),
    );
    await Promise.all(jobs.map((job) => deps.backend.enqueueTool(job)));
  }
}

/**
 * The trace context a child run starts in: the active one, its parent's call's `execute_tool`
 * span (`traceChildStart`), or else the parent run's stored one.
 */
export function traceOfChild(parentTrace: Record<string, string> | undefined): {
  trace?: Record<string, string>;
} {
  const active = injectTraceContext();
  if (Object.keys(active).length > 0) return { trace: active };
  return parentTrace === undefined ? {} : { trace: parentTrace };
}
