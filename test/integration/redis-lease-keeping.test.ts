// Runs held at their model call for longer than their lease lasts, many at once in one
// process on Redis: the process renews every lease it holds together (one `renewLeases` a
// tick), so no step loses its run's lease, none is reported lost, and every run completes once.
import { Redis } from "ioredis";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, AgentRuntime, type Provider, redisBackend, tool } from "../../src/index.js";
import { textResponse, toolCallResponse } from "../../src/testing.js";
import { withOverrides } from "../support/backend-overrides.js";
import { deferred, gate } from "../support/gate.js";
import { captureLogs } from "../support/log-capture.js";
import { until } from "../support/until.js";
import { silent } from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";

beforeAll(async () => {
  await requireRedis();
});

const closing: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

const RUNS = 48;
// Long enough that a loaded host's event-loop lag stays under half of it (BullMQ's own job locks
// lapse past that), short enough that the runs are held for several of it.
const LOCK_DURATION_MS = 2000;
// The keeper renews four times per lease duration: this many renewals outlast two durations.
const RENEWALS_PAST_TWO_DURATIONS = 9;

const textOf = (request: Parameters<Provider["complete"]>[0]): string => {
  const block = request.messages[0]?.content[0];
  return block?.type === "text" ? block.text : "";
};

describe("leases of runs held at their model call on redisBackend()", () => {
  it("keeps every lease past its duration, reports none lost, and completes each run once", async () => {
    const prefix = uniquePrefix();
    const redis = new Redis(redisUrl());
    closing.push(async () => {
      await deletePrefix(prefix);
      redis.disconnect();
    });
    const base = redisBackend({
      url: redisUrl(),
      prefix,
      lockDurationMs: LOCK_DURATION_MS,
      stalledIntervalMs: LOCK_DURATION_MS,
    });
    let renewals = 0;
    const backend = withOverrides(base, {
      renewLeases: (leases) => {
        renewals++;
        return base.renewLeases(leases);
      },
    });

    // The first model call of every run waits at `held`; the calls made per run's input.
    const held = gate();
    const allHeld = deferred<void>();
    const firstCalls = new Map<string, number>();
    const provider: Provider = {
      name: "held",
      async complete(request) {
        if (request.messages.at(-1)?.role === "tool") return textResponse("done");
        const input = textOf(request);
        firstCalls.set(input, (firstCalls.get(input) ?? 0) + 1);
        if (firstCalls.size === RUNS) allHeld.resolve();
        await held.wait();
        return toolCallResponse([{ name: "noop", input: { query: input }, id: "call_1" }]);
      },
    };
    const agent = new Agent({
      provider,
      config: { name: "held" },
      tools: [
        tool({
          name: "noop",
          description: "Answers ok.",
          input: z.object({ query: z.string() }),
          handler: async () => "ok",
        }),
      ],
      logger: silent,
    });
    const logs = captureLogs("warn");
    const runtime = new AgentRuntime({
      agents: [agent],
      backend,
      logger: logs.logger,
      concurrency: { steps: RUNS + 8, tools: 8 },
    });
    closing.push(() => runtime.close({ timeoutMs: 5000 }));
    await runtime.start();

    const handles = await Promise.all(
      Array.from({ length: RUNS }, (_, index) => runtime.submit("held", `run ${index}`)),
    );
    await allHeld.promise;
    const heldSince = renewals;
    await until(
      "the held runs' leases to be renewed past twice their duration",
      async () => renewals - heldSince >= RENEWALS_PAST_TWO_DURATIONS,
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    // Every run's lease is still held, by the step that waits at its model call.
    const leases = await Promise.all(
      handles.map((handle) => redis.exists(`${prefix}:lease:${handle.runId}`)),
    );
    expect(leases).toEqual(handles.map(() => 1));

    held.open();
    const results = await Promise.all(handles.map((handle) => handle.result()));
    expect(results.map((result) => result.status)).toEqual(handles.map(() => "completed"));
    // Provider → tool → provider, once each: no step was taken over and done again.
    expect(results.map((result) => result.messages.length)).toEqual(handles.map(() => 4));
    expect([...firstCalls.values()]).toEqual(handles.map(() => 1));
    const leaseWarnings = logs.lines
      .map((line) => JSON.parse(line) as { msg: string })
      .filter(({ msg }) => msg.includes("lease"));
    expect(leaseWarnings).toEqual([]);
  });
});
