import { afterEach } from "vitest";
import type { RunBackend } from "../../../src/backend.js";
import type { DecisionRecord, RunQuery, RunRecord } from "../../../src/index.js";
import { storedRun } from "../../support/run-records.js";
import type { BackendFactory } from "../backend-contract.js";
import { silent } from "../fixtures.js";

/**
 * Backends for one role's contract: `start()` gives a started backend (no workers); each test's
 * backends are closed, and their storage deleted, after it.
 */
export function roleHarness(factory: BackendFactory) {
  const started: RunBackend[] = [];
  const start = async () => {
    const backend = factory.create();
    started.push(backend);
    await backend.start({ concurrency: 1, logger: silent });
    return backend;
  };
  afterEach(async () => {
    await Promise.all(started.splice(0).map((backend) => backend.close({ timeoutMs: 1000 })));
    await factory.cleanup();
  });
  return { started, start };
}

export const record = (runId: string, status: RunRecord["status"], createdAt: number): RunRecord =>
  storedRun(runId, { status, createdAt });

export const audit = (decision: "allow" | "deny", at: number): DecisionRecord => ({
  toolCallId: "call_1",
  name: "delete_file",
  decision,
  reason: null,
  by: "ops-lead",
  inputHash: "hash",
  at,
});

export const listedIds = async (backend: RunBackend, query: Omit<RunQuery, "limit">) =>
  (await backend.listRuns({ limit: 50, ...query })).runs.map((each) => each.runId);
