import { trace } from "@opentelemetry/api";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, tool } from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";
import { type InstalledTracing, installTracing } from "../../support/tracing.js";

// Runs skip spans while no tracer provider is registered; the provider is looked up at each
// span, so one registered (or removed) after the agent was built is used from the next span.

const seenActiveSpans: boolean[] = [];
const probe = tool({
  name: "probe",
  description: "Notes whether a span is active.",
  input: z.object({}),
  handler: async () => {
    seenActiveSpans.push(trace.getActiveSpan() !== undefined);
    return "ok";
  },
});

const agent = new Agent({
  logger: pino({ level: "silent" }),
  tools: [probe],
  provider: new ScriptedProvider(
    [toolCallResponse([{ name: "probe", input: {} }]), textResponse("done")],
    { loop: true },
  ),
});

let tracing: InstalledTracing | undefined;
afterEach(async () => {
  await tracing?.uninstall();
  tracing = undefined;
  seenActiveSpans.length = 0;
});

describe("spans and the tracer provider registered now", () => {
  it("a run without a provider completes with no span active", async () => {
    const result = await agent.run("go");
    expect(result.status).toBe("completed");
    expect(seenActiveSpans).toEqual([false]);
  });

  it("a provider registered after the agent was built gets the next run's spans", async () => {
    expect((await agent.run("before")).status).toBe("completed");
    tracing = installTracing();
    expect((await agent.run("after")).status).toBe("completed");
    expect(seenActiveSpans).toEqual([false, true]);
    expect(
      tracing
        .spans()
        .map((span) => span.name)
        .sort(),
    ).toEqual(["chat", "chat", "execute_tool probe", "invoke_agent agent"]);
  });

  it("a provider removed again leaves later runs without spans", async () => {
    tracing = installTracing();
    expect((await agent.run("traced")).status).toBe("completed");
    await tracing.uninstall();
    tracing = undefined;
    expect((await agent.run("untraced")).status).toBe("completed");
    expect(seenActiveSpans).toEqual([true, false]);
  });
});
