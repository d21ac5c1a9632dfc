import type { Agent } from "../engine/agent.js";
import { finishRunSpan, openRunSpan } from "../observability/run-span.js";
import { requestedModel } from "../observability/spans.js";
import type { RunBackend } from "../store/backend.js";
import type { RunRecord } from "../store/schemas.js";
import { traceOf } from "./runtime-options.js";

/**
 * A new run's `trace` field: its `invoke_agent` span, started now as a child of the active span
 * (see `openRunSpan`). On the memory backend the run finishes in this process, so its span stays
 * open until then, or until `owner` (the runtime) closes. A child run's span has its parent's
 * stored context as `parent`.
 */
export function runTraceOf(
  agent: Agent<unknown>,
  run: { agent: string; runId: string; sessionId: string },
  where: {
    backend: RunBackend;
    owner: object;
    parent?: Readonly<Record<string, string>> | undefined;
  },
): { trace?: Record<string, string> } {
  const info = {
    ...run,
    model: requestedModel(agent.config.model, agent.provider),
    provider: agent.provider?.name,
  };
  return traceOf(
    openRunSpan(info, {
      keepOpenFor: where.backend.kind === "memory" ? where.owner : undefined,
      parent: where.parent,
    }),
  );
}

/** A record that was not stored (refused, or a run with its id exists): its span ends now. */
export const dropRunTrace = (record: RunRecord): void =>
  finishRunSpan(record.trace, {
    status: "not_submitted",
    error: null,
    usage: undefined,
    iterations: undefined,
  });
