// A run's log lines carry its runId and sessionId (bindings of the run's child logger), direct
// and durable; the child logger is made on the run's first line, not for a run that logs none.
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  Agent,
  AgentRuntime,
  HookEvent,
  memoryBackend,
  type Provider,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse } from "../../../src/providers/scripted.js";
import { captureLogs } from "../../support/log-capture.js";

const failing: Provider = {
  name: "down",
  complete: () => Promise.reject(new Error("upstream is down")),
};

const entries = (lines: readonly string[]) =>
  lines.map((line) => JSON.parse(line) as Record<string, unknown>);

let runtime: AgentRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

describe("a run's log lines", () => {
  it("name the run and its session on a hook observer's throw and a provider failure", async () => {
    const logs = captureLogs("warn");
    const agent = new Agent({ provider: failing, config: { name: "logs" }, logger: logs.logger });
    agent.hooks.on(HookEvent.AGENT_START, () => {
      throw new Error("observer broke");
    });

    const result = await agent.run("hi", { sessionId: "session-7" });

    const lines = entries(logs.lines);
    expect(lines.map((line) => line.msg)).toEqual([
      "hook observer threw; ignored",
      "provider call failed",
    ]);
    for (const line of lines) {
      expect(line).toMatchObject({ runId: result.runId, sessionId: "session-7" });
    }
    // The run's id once: from the child logger's bindings, not repeated by the line.
    expect(logs.lines[1]?.split('"runId"')).toHaveLength(2);
  });

  it("make no child logger for a run that logs nothing", async () => {
    const logs = captureLogs("warn");
    const child = vi.spyOn(logs.logger, "child");
    const agent = new Agent({
      provider: new ScriptedProvider([textResponse("hello")]),
      logger: logs.logger,
    });

    expect((await agent.run("hi")).status).toBe("completed");
    expect(child).not.toHaveBeenCalled();

    const failed = new Agent({ provider: failing, logger: logs.logger });
    const spied = vi.spyOn(logs.logger, "child");
    await failed.run("hi");
    expect(spied).toHaveBeenCalledTimes(1);
  });

  it("name the run and its session in a durable run's step", async () => {
    const logs = captureLogs("warn");
    const agent = new Agent({
      provider: failing,
      config: { name: "durable" },
      logger: logs.logger,
    });
    runtime = new AgentRuntime({ agents: [agent], backend: memoryBackend(), logger: logs.logger });
    await runtime.start();

    const handle = await runtime.submit("durable", "hi", { sessionId: "session-9" });
    expect(await handle.result()).toMatchObject({ status: "failed" });

    const line = await logs.waitFor((entry) => entry.msg === "provider call failed");
    expect(line).toMatchObject({ runId: handle.runId, sessionId: "session-9", agent: "durable" });
  });
});
