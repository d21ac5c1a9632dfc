import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import {
  Agent,
  AgentRuntime,
  HOOK_PAYLOADS,
  HookEvent,
  type HookPayloads,
  memoryBackend,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";
import { toolResults } from "../../support/messages.js";

const fixtures = fileURLToPath(new URL("../../fixtures/", import.meta.url));

describe("skills and knowledge in a durable run (memory backend)", () => {
  it("lists skills in the prompt, runs both tools and emits their hooks on the agent", async () => {
    const logger = pino({ level: "silent" });
    const provider = new ScriptedProvider([
      toolCallResponse([
        { name: "skill", input: { name: "commit-message" }, id: "call_skill" },
        { name: "knowledge_search", input: { query: "rollback", limit: 1 }, id: "call_search" },
      ]),
      textResponse("done"),
    ]);
    const agent = new Agent({
      provider,
      logger,
      config: { name: "writer" },
      skills: { paths: [`${fixtures}skills`] },
      knowledge: [{ name: "handbook", path: `${fixtures}knowledge/handbook` }],
    });
    const skills: HookPayloads[typeof HookEvent.SKILL_INVOKED][] = [];
    const accesses: HookPayloads[typeof HookEvent.KNOWLEDGE_ACCESSED][] = [];
    agent.hooks.on(HookEvent.SKILL_INVOKED, ({ data }) => {
      skills.push(data);
    });
    agent.hooks.on(HookEvent.KNOWLEDGE_ACCESSED, ({ data }) => {
      accesses.push(data);
    });
    const runtime = new AgentRuntime({ agents: [agent], backend: memoryBackend(), logger });
    await runtime.start();
    try {
      const result = await (await runtime.submit("writer", "go")).result();
      expect(result.status).toBe("completed");
      expect(provider.requests[0]?.system).toContain("- commit-message: Write a commit message");
      const [skill, search] = toolResults(result.messages);
      expect(skill).toMatchObject({ toolCallId: "call_skill", isError: false });
      expect(skill?.content).toMatch(/^Summarise the change/);
      expect(JSON.parse(search?.content ?? "[]")).toMatchObject([{ path: "rollbacks.md" }]);
      expect(skills).toMatchObject([{ skill: "commit-message", found: true }]);
      expect(accesses).toEqual([
        { tool: "knowledge_search", bundle: null, found: true, query: "rollback", hits: 1 },
      ]);
      expect(HOOK_PAYLOADS[HookEvent.SKILL_INVOKED].parse(skills[0])).toEqual(skills[0]);
    } finally {
      await runtime.close();
    }
  });
});
