import { RUN_RECORD_VERSION, type RunRecord } from "../../src/index.js";

/** A queued run's record as `submit` stores it, with what a test sets of it. */
export const storedRun = (
  runId: string,
  shape: {
    createdAt: number;
    agent?: string;
    sessionId?: string;
    status?: RunRecord["status"];
  },
): RunRecord => ({
  schemaVersion: RUN_RECORD_VERSION,
  runId,
  sessionId: shape.sessionId ?? `session-${runId}`,
  agent: shape.agent ?? "support",
  status: shape.status ?? "queued",
  phase: "compose",
  input: {
    messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    maxIterations: 5,
  },
  snapshot: null,
  result: null,
  createdAt: shape.createdAt,
  updatedAt: shape.createdAt,
});
