// SPEC §13: nothing secret reaches a log line, a span or a flight recording. A tool marks input fields secret with
// `.meta({ secret: true })`; a durable run of it, at the most verbose log level, with tracing on,
// through a person's approval, a failing tool and a wrong input: no log line and no span
// attribute carries the marked values.
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  AgentRuntime,
  FlightRecorder,
  memoryBackend,
  PermissionManager,
  tool,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { useTracing } from "../support/tracing.js";

const CANARY = "canary-secret-31337";
const tracing = useTracing();
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A pino logger at `trace` level whose lines are kept. */
function capturedLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: pino({ level: "trace" }, sink), lines };
}

describe("secret tool inputs in logs and spans", () => {
  it("keeps marked input values out of every log line, span and recording of a durable run", async () => {
    const { logger, lines } = capturedLogger();
    const connect = tool({
      name: "connect",
      description: "Connects to a host.",
      input: z.object({
        host: z.string(),
        credentials: z.object({ user: z.string(), passphrase: z.string().meta({ secret: true }) }),
      }),
      handler: async ({ host, credentials }) => {
        if (host === "down.example") throw new Error(`cannot reach ${host}`);
        return credentials.passphrase === CANARY ? "connected" : "refused";
      },
    });
    const input = (host: string) => ({ host, credentials: { user: "ada", passphrase: CANARY } });
    const agent = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([
          { id: "c1", name: "connect", input: input("db.example") },
          { id: "c2", name: "connect", input: input("down.example") },
          { id: "c3", name: "connect", input: { host: 7, credentials: { passphrase: CANARY } } },
        ]),
        textResponse("done"),
      ]),
      tools: [connect],
      permissions: new PermissionManager({
        default: "allow",
        rules: [{ tool: "connect", decision: "ask", reason: "connecting" }],
      }),
      config: { name: "ops" },
      logger,
      recorder: new FlightRecorder(),
    });
    const runtime = new AgentRuntime({ agents: [agent], backend: memoryBackend(), logger });
    await runtime.start();
    closers.push(() => runtime.close({ timeoutMs: 5000 }));

    const handle = await runtime.submit("ops", "connect");
    expect((await handle.result()).status).toBe("awaiting_approval");
    for (const id of ["c1", "c2"]) await runtime.approve(handle.runId, id, { by: "ops-lead" });
    const result = await handle.result();
    expect(result.status).toBe("completed");
    const outcomes = result.messages
      .flatMap((message) => message.content)
      .filter((block) => block.type === "tool_result");
    expect(outcomes.map((block) => block.type === "tool_result" && block.isError)).toEqual([
      false,
      true,
      true,
    ]);

    const recording = JSON.stringify(await runtime.recording(handle.runId));
    expect(recording).toContain('"type":"tool_result_raw"');
    expect(recording).toContain('"passphrase":"[redacted]"');
    expect(recording).not.toContain(CANARY);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).not.toContain(CANARY);
    const spans = tracing.spans();
    expect(spans.map((span) => span.name)).toContain("execute_tool connect");
    for (const span of spans) {
      expect(JSON.stringify(span.attributes)).not.toContain(CANARY);
      expect(JSON.stringify(span.events)).not.toContain(CANARY);
    }
  });
});
