import { pino } from "pino";
import { expect } from "vitest";
import {
  Agent,
  type AgentOptions,
  HOOK_PAYLOADS,
  HookEvent,
  type HookPayloads,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { toolResults } from "./messages.js";

type FeatureEvent = typeof HookEvent.SKILL_INVOKED | typeof HookEvent.KNOWLEDGE_ACCESSED;

/** A SKILL_INVOKED or KNOWLEDGE_ACCESSED event as an observer received it. */
export type SeenEvent = {
  [E in FeatureEvent]: { event: E; data: HookPayloads[E] };
}[FeatureEvent];

/**
 * Runs an agent whose model requests `calls` in one turn, then answers "done". Returns the tool
 * results in call order and the feature events observed, each checked against HOOK_PAYLOADS.
 */
export async function runToolCalls(
  options: AgentOptions,
  calls: ReadonlyArray<{ name: string; input: Record<string, unknown> }>,
) {
  const provider = new ScriptedProvider([toolCallResponse(calls), textResponse("done")]);
  const agent = new Agent({ logger: pino({ level: "silent" }), ...options, provider });
  const events: SeenEvent[] = [];
  agent.hooks.on(HookEvent.SKILL_INVOKED, ({ event, data }) => {
    events.push({ event, data });
  });
  agent.hooks.on(HookEvent.KNOWLEDGE_ACCESSED, ({ event, data }) => {
    events.push({ event, data });
  });
  const result = await agent.run("go");
  provider.assertComplete();
  expect(result.status).toBe("completed");
  for (const { event, data } of events) {
    // parse() strips unknown keys: equality proves the payload has exactly the schema's shape.
    expect(HOOK_PAYLOADS[event].parse(data)).toEqual(data);
  }
  return { result, results: toolResults(result.messages), events, provider };
}
