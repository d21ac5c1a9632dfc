import { afterEach, describe, expect, it, vi } from "vitest";
import {
  LeaseLostError,
  memoryBackend,
  RUN_RECORD_VERSION,
  type RunRecord,
} from "../../../src/index.js";

const record = (status: RunRecord["status"]): RunRecord => ({
  schemaVersion: RUN_RECORD_VERSION,
  runId: "run",
  sessionId: "session",
  agent: "support",
  status,
  phase: "compose",
  input: {
    messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    maxIterations: 3,
  },
  snapshot: null,
  result: null,
  createdAt: 1,
  updatedAt: 1,
});

describe("memoryBackend() leases", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("lets another worker take an expired lease and refuses the old holder's writes", async () => {
    vi.useFakeTimers({ now: 0 });
    const backend = memoryBackend({ lockDurationMs: 1000 });
    await backend.createRun(record("queued"));
    const first = await backend.acquireLease("run");
    if (!first.acquired) throw new Error("expected the lease");

    vi.setSystemTime(400);
    expect(await backend.acquireLease("run")).toEqual({ acquired: false, remainingMs: 600 });
    vi.setSystemTime(1001);
    const second = await backend.acquireLease("run");

    expect(second).toEqual({ acquired: true, token: first.token + 1 });
    await expect(backend.saveRun("run", first.token, record("failed"))).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    // Taking the lease made the queued run running; the stale holder's save changed nothing.
    expect((await backend.loadRun("run"))?.status).toBe("running");
  });

  it("a save renews the lease", async () => {
    vi.useFakeTimers({ now: 0 });
    const backend = memoryBackend({ lockDurationMs: 1000 });
    await backend.createRun(record("queued"));
    const held = await backend.acquireLease("run");
    if (!held.acquired) throw new Error("expected the lease");

    vi.setSystemTime(900);
    await backend.saveRun("run", held.token, record("running"));
    vi.setSystemTime(1500);

    expect(await backend.acquireLease("run")).toEqual({ acquired: false, remainingMs: 400 });
  });
});

describe("memoryBackend() records", () => {
  it("returns copies: changing a loaded record changes nothing stored", async () => {
    const backend = memoryBackend();
    const original = record("queued");
    await backend.createRun(original);
    original.status = "failed";
    const loaded = await backend.loadRun("run");
    if (loaded === undefined) throw new Error("expected the record");
    loaded.phase = "changed";

    expect(await backend.loadRun("run")).toEqual(record("queued"));
  });
});
