import type { RuntimeDeps } from "../core/deps.js";
import { recordById } from "../core/id-record.js";
import type { Message } from "../core/values.js";
import type { Agent } from "../engine/agent.js";
import { toMessages } from "../engine/run-input.js";
import type { RunBackend } from "../store/backend.js";
import { UnknownAgentError } from "../store/errors.js";
import { RUN_RECORD_VERSION, type RunRecord } from "../store/schemas.js";
import { checkInputSize } from "./limits.js";
import { type RunTraces, runTraceOf } from "./run-trace.js";
import type { SubmitOptions } from "./runtime-options.js";

/** What a runtime lends to build the records of the runs it submits. */
export interface RunRecordSource {
  agents: ReadonlyMap<string, Agent<unknown>>;
  backend: RunBackend;
  deps: RuntimeDeps;
  maxInputBytes: number;
  /** The runtime's run spans: each new run's starts here. */
  traces: RunTraces;
}

/** The record of a new, `queued` run of `agentName`, with its run span started. */
export function newRunRecord(
  source: RunRecordSource,
  agentName: string,
  input: string | readonly Message[],
  options: SubmitOptions,
  runId: string = source.deps.generateId(),
  parentTrace?: Readonly<Record<string, string>>,
): RunRecord {
  const agent = source.agents.get(agentName);
  if (agent === undefined) throw new UnknownAgentError(agentName, [...source.agents.keys()]);
  // Plain JSON data, not too deep (InputInvalidError), and not too big (InputTooLargeError).
  const messages = toMessages(input);
  checkInputSize(input, messages, source.maxInputBytes);
  const now = source.deps.clock.now();
  const sessionId = options.sessionId ?? source.deps.generateId();
  // The run's `invoke_agent` span: its steps' spans, in any process, are its children.
  const trace = runTraceOf(
    agent,
    { agent: agentName, runId, sessionId },
    { spans: source.traces.spans, parent: parentTrace },
  );
  return {
    schemaVersion: RUN_RECORD_VERSION,
    runId,
    sessionId,
    agent: agentName,
    status: "queued",
    phase: "compose",
    input: {
      messages,
      ...(typeof input === "string" ? { text: input } : {}),
      maxIterations: agent.config.maxIterations,
    },
    snapshot: null,
    result: null,
    createdAt: now,
    updatedAt: now,
    ...trace,
    ...(options.priority === undefined ? {} : { priority: options.priority }),
    ...secretInputsOf(agent),
  };
}

/** The record's `secretInputs`: the fields the agent's tools mark secret, if any. */
function secretInputsOf(agent: Agent<unknown>): Pick<RunRecord, "secretInputs"> {
  const secrets = agent.tools.secretInputs();
  if (Object.keys(secrets).length === 0) return {};
  return {
    secretInputs: recordById(
      Object.entries(secrets).map(([name, paths]) => [name, paths.map((path) => [...path])]),
    ),
  };
}
