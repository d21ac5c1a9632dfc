// Live runs across processes on Redis: two runtimes on one prefix stand in for two processes
// (each has its own connections, so everything between them goes through Redis): deltas reach
// a reader in the other one as the provider sends them, and a cancel from the other one aborts
// the provider call or handler at once, even when they ignore their signal.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { RunBackend } from "../../src/backend.js";
import {
  type Provider,
  type ProviderResponse,
  type ProviderStreamEvent,
  type RunEvent,
  redisBackend,
  tool,
} from "../../src/index.js";
import { textResponse } from "../../src/testing.js";
import { deferred, gate, makeAgent, oneToolModel, Runtimes } from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";

beforeAll(async () => {
  await requireRedis();
});

const runtimes = new Runtimes();
const prefixes: string[] = [];

afterEach(async () => {
  await runtimes.closeAll();
  await Promise.all(prefixes.splice(0).map((prefix) => deletePrefix(prefix)));
});

function backendOn(prefix: string): RunBackend {
  return redisBackend({ url: redisUrl(), prefix, lockDurationMs: 2000, stalledIntervalMs: 1000 });
}

/** A worker runtime and a submitting runtime (no workers) on one fresh prefix. */
async function twoProcesses(agent: ReturnType<typeof makeAgent>) {
  const prefix = uniquePrefix();
  prefixes.push(prefix);
  const worker = await runtimes.start([agent], backendOn(prefix));
  const submitter = await runtimes.start([agent], backendOn(prefix), { workers: false });
  return { worker, submitter };
}

/** A provider whose stream sends "Hel", waits for `held` to open, then sends "lo." and ends. */
function heldStream(held: { wait(): Promise<void> }): Provider {
  return {
    name: "held",
    complete: async () => textResponse("Hello."),
    async *stream(): AsyncGenerator<ProviderStreamEvent> {
      yield { type: "text_delta", text: "Hel" };
      await held.wait();
      yield { type: "text_delta", text: "lo." };
      yield { type: "response", response: textResponse("Hello.") };
    },
  };
}

describe("live runs across processes on redisBackend()", () => {
  it("a reader in another process receives deltas while the provider still streams", async () => {
    const held = gate();
    const agent = makeAgent("writer", { provider: heldStream(held) });
    const { submitter } = await twoProcesses(agent);

    const handle = await submitter.submit("writer", "Say hello");
    const reading = handle.events()[Symbol.asyncIterator]();
    // Nothing is saved yet (the provider has not answered), and the first delta is there.
    expect(await reading.next()).toEqual({
      done: false,
      value: { type: "text_delta", text: "Hel" },
    });
    expect((await handle.record()).status).not.toBe("completed");

    held.open();
    const rest: RunEvent[] = [];
    for (;;) {
      const next = await reading.next();
      if (next.done) break;
      rest.push(next.value);
    }
    expect(rest[0]).toEqual({ type: "text_delta", text: "lo." });
    const last = rest.at(-1);
    expect(last?.type === "result" && last.result.output).toBe("Hello.");
  });

  it("a cancel from another process aborts a provider call that ignores its signal", async () => {
    const called = deferred<void>();
    const aborted = deferred<boolean>();
    const provider: Provider = {
      name: "stuck",
      complete: async (_request, options): Promise<ProviderResponse> => {
        options?.signal?.addEventListener("abort", () => aborted.resolve(true));
        called.resolve();
        return new Promise<never>(() => {}); // ignores its signal: never answers
      },
    };
    const agent = makeAgent("stuck", { provider });
    const { submitter } = await twoProcesses(agent);

    const handle = await submitter.submit("stuck", "Hello?");
    await called.promise;
    await submitter.cancel(handle.runId);

    expect(await aborted.promise).toBe(true);
    const result = await handle.result();
    expect(result.status).toBe("cancelled");
    expect(result.error).toMatchObject({ name: "RunCancelledError" });
  });

  it("a cancel from another process aborts a handler that ignores its signal", async () => {
    const started = deferred<void>();
    const aborted = deferred<boolean>();
    const hang = tool({
      name: "hang",
      description: "Never returns.",
      input: z.object({ query: z.string() }),
      handler: async (_input, context) => {
        context.signal.addEventListener("abort", () => aborted.resolve(true));
        started.resolve();
        return new Promise<string>(() => {});
      },
    });
    const agent = makeAgent("hanging", { provider: oneToolModel("hang"), tools: [hang] });
    const { submitter } = await twoProcesses(agent);

    const handle = await submitter.submit("hanging", "wait");
    await started.promise;
    await submitter.cancel(handle.runId);

    expect(await aborted.promise).toBe(true);
    expect((await handle.result()).status).toBe("cancelled");
  });
});
