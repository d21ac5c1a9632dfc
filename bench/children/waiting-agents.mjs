// The agents of bench:children's waiting part (waiting-parent.mjs, heap-probe.mjs): "parked"
// parks on its one call (it asks a person), "parent" calls "parked" as an agent tool and waits.
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { z } from "zod";
import { Agent, PermissionManager, tool } from "../../dist/index.js";
import { toolCallResponse } from "../../dist/testing.js";

const logger = pino({ level: "silent" });

/**
 * A model whose every answer calls `child` (each run here makes one call: it parks or waits on
 * it). Not a ScriptedProvider, which keeps every request: heap that is no run's.
 */
const callsChild = {
  name: "calls-child",
  complete: async () => toolCallResponse([{ name: "child", input: { input: "x" }, id: "call_1" }]),
};

/** A plain tool named `name` that asks a person first: a run calling it parks. */
const askingTool = (name) =>
  tool({
    name,
    description: "Asks first",
    input: z.object({ input: z.string() }),
    handler: () => "x",
  });

/** The agents: `parked` (parks on its call), `parent` (calls `parked` as an agent tool). */
export function agents() {
  const permissions = () => new PermissionManager({ rules: [{ tool: "child", decision: "ask" }] });
  const parked = new Agent({
    provider: callsChild,
    config: { name: "parked" },
    tools: [askingTool("child")],
    permissions: permissions(),
    logger,
  });
  const parent = new Agent({
    provider: callsChild,
    config: { name: "parent" },
    tools: [parked.asTool({ name: "child", description: "Child" })],
    logger,
  });
  return [parent, parked];
}

/** Waits until `count` runs are parked (awaiting approval). */
export async function parkedRuns(runtime, count) {
  for (let tries = 0; tries < 3000; tries++) {
    let listed = 0;
    let cursor;
    do {
      const page = await runtime.list({ status: "awaiting_approval", limit: 500, cursor });
      listed += page.runs.length;
      cursor = page.nextCursor;
    } while (cursor);
    if (listed >= count) return;
    await sleep(20);
  }
  throw new Error(`${count} runs never parked`);
}
