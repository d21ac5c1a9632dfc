// Timeouts live in the stage functions the durable workers call too: a durable run on the
// embedded backend gets them exactly as a direct run does.
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, memoryBackend, type Provider, tool } from "../../src/index.js";
import { oneToolModel, Runtimes, silent } from "./fixtures.js";

const runtimes = new Runtimes();

afterEach(async () => {
  await runtimes.closeAll();
});

describe("timeouts in durable runs (memory backend)", () => {
  it("a tool handler past its timeout gets an error result and the run completes", async () => {
    const hangs = tool({
      name: "search",
      description: "Never answers and ignores its signal.",
      input: z.object({ query: z.string() }),
      handler: () => new Promise(() => {}),
      timeoutMs: 50,
    });
    const agent = new Agent({
      config: { name: "support" },
      provider: oneToolModel("search"),
      tools: [hangs],
      logger: silent,
    });
    const runtime = await runtimes.start([agent], memoryBackend());

    const result = await (await runtime.submit("support", "anything")).result();

    expect(result.status).toBe("completed");
    expect(result.output).toBe('Answer: Tool "search" timed out after 50 ms.');
  });

  it("a provider call past providerTimeoutMs fails the run with code timeout", async () => {
    const silentModel: Provider = { name: "silent", complete: () => new Promise(() => {}) };
    const agent = new Agent({
      config: { name: "support", providerTimeoutMs: 50 },
      provider: silentModel,
      logger: silent,
    });
    const runtime = await runtimes.start([agent], memoryBackend());

    const result = await (await runtime.submit("support", "hello")).result();

    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({ name: "ProviderError", code: "timeout" });
  });
});
