// Timeouts of tool handlers and provider calls (SPEC §2, issue #13), run against every backend
// by describeBackendContract: a call that never answers ends at its deadline, its signal fires,
// and the worker slot it held is free again.
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, type Provider, type ProviderResponse, tool } from "../../src/index.js";
import { textResponse } from "../../src/testing.js";
import type { BackendFactory } from "./backend-contract.js";
import { deferred, makeAgent, oneToolModel, Runtimes, silent } from "./fixtures.js";

/** Both queues one job at a time: a slot a hanging call kept would stall every later run. */
const ONE_SLOT = { steps: 1, tools: 1 } as const;

/** `search`: hangs on the query "stuck", ignoring its signal (and says when that fires). */
function hangingSearch(timeoutMs?: number) {
  const aborted = deferred<unknown>();
  const definition = tool({
    name: "search",
    description: "Hangs on the query 'stuck'; answers every other query.",
    input: z.object({ query: z.string() }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    handler: ({ query }, { signal }) => {
      if (query !== "stuck") return Promise.resolve(`Results for ${query}`);
      signal.addEventListener("abort", () => aborted.resolve(signal.reason), { once: true });
      return new Promise<string>(() => {});
    },
  });
  return { tool: definition, aborted: aborted.promise };
}

/** A model that never answers the prompt "stuck", ignoring its signal; echoes any other. */
function hangingModel() {
  const aborted = deferred<unknown>();
  const model: Provider = {
    name: "hanging",
    complete(request, options): Promise<ProviderResponse> {
      const prompt = request.messages.at(-1)?.content.at(0);
      const text = prompt?.type === "text" ? prompt.text : "";
      if (text !== "stuck") return Promise.resolve(textResponse(`Answer: ${text}`));
      const signal = options?.signal;
      signal?.addEventListener("abort", () => aborted.resolve(signal.reason), { once: true });
      return new Promise(() => {});
    },
  };
  return { model, aborted: aborted.promise };
}

export function describeTimeoutsContract(name: string, factory: BackendFactory): void {
  describe(`timeouts on ${name}`, () => {
    const runtimes = new Runtimes();
    afterEach(async () => {
      await runtimes.closeAll();
      await factory.cleanup();
    });

    it("a handler past the tool's timeoutMs: signal aborted, error result, run completes, slot freed", async () => {
      const search = hangingSearch(50);
      const agent = makeAgent("support", {
        provider: oneToolModel("search"),
        tools: [search.tool],
      });
      const runtime = await runtimes.start([agent], factory.create(), { concurrency: ONE_SLOT });

      const stuck = await (await runtime.submit("support", "stuck")).result();

      expect(stuck.status).toBe("completed");
      expect(stuck.output).toBe('Answer: Tool "search" timed out after 50 ms.');
      expect(await search.aborted).toBeInstanceOf(Error);
      // The handler still hangs; the one tool slot and the one step slot serve the next run.
      const next = await (await runtime.submit("support", "harnessx")).result();
      expect(next.status).toBe("completed");
      expect(next.output).toBe("Answer: Results for harnessx");
    });

    it("a tool without timeoutMs gets the agent's config.toolTimeoutMs", async () => {
      const search = hangingSearch();
      const agent = new Agent({
        config: { name: "support", toolTimeoutMs: 60 },
        provider: oneToolModel("search"),
        tools: [search.tool],
        logger: silent,
      });
      const runtime = await runtimes.start([agent], factory.create(), { concurrency: ONE_SLOT });

      const stuck = await (await runtime.submit("support", "stuck")).result();

      expect(stuck.output).toBe('Answer: Tool "search" timed out after 60 ms.');
      expect(await search.aborted).toBeInstanceOf(Error);
    });

    it("a provider call past providerTimeoutMs: signal aborted, run fails with code timeout, slot freed", async () => {
      const { model, aborted } = hangingModel();
      const agent = new Agent({
        config: { name: "support", providerTimeoutMs: 50 },
        provider: model,
        logger: silent,
      });
      const runtime = await runtimes.start([agent], factory.create(), { concurrency: ONE_SLOT });

      const stuck = await (await runtime.submit("support", "stuck")).result();

      expect(stuck.status).toBe("failed");
      expect(stuck.error).toMatchObject({
        name: "ProviderError",
        code: "timeout",
        message: 'Provider "hanging" did not answer within 50 ms (config.providerTimeoutMs).',
      });
      expect(await aborted).toBeInstanceOf(Error);
      expect((await runtime.get(stuck.runId)).status).toBe("failed");
      const next = await (await runtime.submit("support", "hello")).result();
      expect(next.status).toBe("completed");
      expect(next.output).toBe("Answer: hello");
    });
  });
}
