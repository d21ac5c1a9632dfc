import type { Logger } from "pino";
import type { Clock } from "../core/deps.js";
import type { Agent } from "../engine/agent.js";
import type { RunSpans } from "../observability/run-span.js";
import type { ActiveRuns } from "../store/active-runs.js";
import type { ApprovalNoticeJob } from "../store/approval-request.js";
import type { RunBackend } from "../store/backend.js";
import { BackendError } from "../store/errors.js";
import type { RunLink } from "../store/run-tree.js";
import type { ToolLimits } from "../tools/result-limit.js";
import type { ProviderGates } from "./provider-gates.js";

/** What the run-step and tool-dispatch workers of one process share. */
export interface WorkerDeps {
  backend: RunBackend;
  /** The agents this process can advance, by `config.name`. */
  agents: ReadonlyMap<string, Agent<unknown>>;
  logger: Logger;
  clock: Clock;
  active: ActiveRuns;
  /**
   * A raw tool result bigger than `maxToolResultBytes` (UTF-8 bytes of its content) is cut
   * before it is committed; a tool input bigger than `maxToolInputBytes` gets an error result.
   * @defaultValue 1 MB each
   */
  limits?: ToolLimits;
  /** Shared rate limits around model calls; without it calls go unchecked. */
  gates?: ProviderGates;
  /**
   * Told of the calls that started waiting for a person in a step (`onApprovalRequested`, the
   * approval webhook); never throws. Without it nobody is told. `again`: the calls were announced
   * before (a redelivered step): only their notices are queued again.
   */
  approvalRequested?: (
    jobs: readonly ApprovalNoticeJob[],
    options: { again: boolean },
  ) => Promise<void>;
  /**
   * Stores the child run `link` names (idempotent: nothing when it exists) and queues its first
   * step; true when this stored it. The write that stores it appends its `child_started` to
   * the parent's log (`RunStore.createRun`). Without it, calls of agent tools get an error
   * result.
   */
  submitChild?: (link: RunLink, input: string, options: ChildSubmitOptions) => Promise<boolean>;
  /**
   * `submitChild` for the children of a turn, in one bulk write; resolves with the ids of the
   * children this stored. Throws, storing none, when a child's record cannot be built.
   */
  submitChildren?: (children: readonly ChildSubmit[]) => Promise<string[]>;
  /** The run spans this process keeps open: a step that finishes a run ends its span here. */
  runSpans?: RunSpans;
}

/** One child run to submit (`WorkerDeps.submitChildren`). */
export interface ChildSubmit {
  link: RunLink;
  input: string;
  options: ChildSubmitOptions;
}

/** What a child run inherits from its parent. */
export interface ChildSubmitOptions {
  sessionId: string;
  priority?: number;
  trace?: Record<string, string>;
}

/** The agent a stored run names; a process without it cannot advance the run. */
export function agentFor(deps: WorkerDeps, name: string, runId: string): Agent<unknown> {
  const agent = deps.agents.get(name);
  if (agent === undefined) {
    throw new BackendError(
      `Run "${runId}" needs agent "${name}", which is not registered in this process.`,
    );
  }
  return agent;
}
