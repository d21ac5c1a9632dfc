// A model call that waits for its rate limit is a value the drive loop hands back, not an
// exception: the run stays at `provider`, nothing fails, and the machine hears nothing of it.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { ProviderError } from "../../../src/core/errors.js";
import type { Message } from "../../../src/core/values.js";
import { Agent } from "../../../src/engine/agent.js";
import { currentPhase, drive } from "../../../src/engine/drive.js";
import type { ProviderDeferral, ProviderGate } from "../../../src/engine/provider-gate.js";
import { startRun } from "../../../src/engine/run-lifecycle.js";
import { ScriptedProvider, textResponse } from "../../../src/testing.js";

const DEFERRAL: ProviderDeferral = { delayMs: 1500, waitingSince: 1000 };

/** A gate whose `admit` and `rateLimited` answer as told, and which notes what it was asked. */
function scriptedGate(answers: {
  admit?: () => Promise<ProviderDeferral | undefined>;
  rateLimited?: (error: ProviderError) => Promise<ProviderDeferral>;
}) {
  const seen: { admitted: number; rateLimited: ProviderError[]; spent: number } = {
    admitted: 0,
    rateLimited: [],
    spent: 0,
  };
  const gate: ProviderGate = {
    admit: async () => {
      seen.admitted += 1;
      return answers.admit?.();
    },
    rateLimited: async (error) => {
      seen.rateLimited.push(error);
      if (answers.rateLimited === undefined) throw error;
      return answers.rateLimited(error);
    },
    spent: async () => {
      seen.spent += 1;
    },
  };
  return { gate, seen };
}

/** A run of `agent` started under `gate`, as a durable step starts one. */
async function startedRun(agent: Agent, gate: ProviderGate) {
  const messages: Message[] = [{ role: "user", content: [{ type: "text", text: "hello" }] }];
  // The run's log holds its input, as a step's env loads it from the record.
  const env = agent.runEnv({
    runId: "r1",
    sessionId: "s1",
    signal: undefined,
    emit: undefined,
    conversation: [...messages],
  });
  env.providerGate = gate;
  const cursor = await startRun(env, {
    runId: "r1",
    sessionId: "s1",
    input: "hello",
    messages,
    maxIterations: 5,
    agent: agent.name,
  });
  return { cursor, env };
}

const agentWith = (provider: ScriptedProvider) =>
  new Agent({ provider, logger: pino({ level: "silent" }) });

describe("a deferred model call", () => {
  it("the gate's deferral ends the drive with it; the provider is not called", async () => {
    const provider = new ScriptedProvider([]);
    const { gate, seen } = scriptedGate({ admit: async () => DEFERRAL });
    const { cursor, env } = await startedRun(agentWith(provider), gate);

    const deferral = await drive(cursor, env);

    expect(deferral).toEqual(DEFERRAL);
    expect(currentPhase(cursor)).toBe("provider");
    expect(cursor.getSnapshot().status).toBe("active");
    expect(cursor.getSnapshot().context.error).toBeNull();
    expect(provider.requests).toHaveLength(0);
    expect(seen.admitted).toBe(1);
  });

  it("a rate_limited answer goes to the gate, whose deferral ends the drive; the run does not fail", async () => {
    const limited = new ProviderError("Slow down.", { code: "rate_limited", retryAfterMs: 2000 });
    const provider = new ScriptedProvider([
      () => {
        throw limited;
      },
    ]);
    const { gate, seen } = scriptedGate({ rateLimited: async () => DEFERRAL });
    const { cursor, env } = await startedRun(agentWith(provider), gate);

    const deferral = await drive(cursor, env);

    expect(deferral).toEqual(DEFERRAL);
    expect(seen.rateLimited).toEqual([limited]);
    expect(currentPhase(cursor)).toBe("provider");
    expect(cursor.getSnapshot().context.error).toBeNull();
    provider.assertComplete();
  });

  it("a call admitted at once completes the run, and the drive ends with no deferral", async () => {
    const provider = new ScriptedProvider([textResponse("Hi.")]);
    const { gate, seen } = scriptedGate({});
    const { cursor, env } = await startedRun(agentWith(provider), gate);

    const deferral = await drive(cursor, env);

    expect(deferral).toBeUndefined();
    expect(cursor.getSnapshot().value).toBe("done");
    expect(seen).toEqual({ admitted: 1, rateLimited: [], spent: 1 });
  });

  it("a gate that gives up (its wait budget spent) fails the run with rate_limited", async () => {
    const provider = new ScriptedProvider([
      () => {
        throw new ProviderError("Slow down.", { code: "rate_limited" });
      },
    ]);
    const { gate } = scriptedGate({
      rateLimited: async () => {
        throw new ProviderError("Stayed rate limited for longer than config.rateLimitWaitMs.", {
          code: "rate_limited",
          retryable: false,
          phase: "provider",
        });
      },
    });
    const { cursor, env } = await startedRun(agentWith(provider), gate);

    const deferral = await drive(cursor, env);

    expect(deferral).toBeUndefined();
    expect(cursor.getSnapshot().value).toBe("failed");
    expect(cursor.getSnapshot().context.error).toMatchObject({
      name: "ProviderError",
      code: "rate_limited",
      phase: "provider",
    });
  });
});
