// The agents of the runtime benchmark. Any number of concurrent runs share one provider, so the
// model is scripted by turn (like the demo's support model), not by a shared script position:
// a request whose last message is a tool result gets the final answer, any other request asks
// for one call of the no-op tool.
import { pino } from "pino";
import { z } from "zod";
import { Agent, PermissionManager, tool } from "../../dist/index.js";
import { textResponse, toolCallResponse } from "../../dist/testing.js";

/** Runs (provider → one tool → provider) to completion. */
export const RUN_AGENT = "bench";
/** The same run, but its tool call asks a person: the run parks after one provider call. */
export const PARKED_AGENT = "bench-parked";
/** The same run, but its first model call waits until `releaseHeld()`: runs held in flight. */
export const HELD_AGENT = "bench-held";

const held = { waiting: 0, release: deferred() };

function deferred() {
  let resolve;
  const promise = new Promise((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

/** How many model calls of `HELD_AGENT` wait in this process. */
export const heldCalls = () => held.waiting;

/** Lets every waiting call of `HELD_AGENT` answer (and the ones after it, until the next hold). */
export function releaseHeld() {
  held.release.resolve();
  held.release = deferred();
}

/** `turnModel`, its first turn held until `releaseHeld()`. */
const heldModel = {
  name: "bench-held",
  async complete(request) {
    if (request.messages.at(-1)?.role !== "tool") {
      held.waiting++;
      await held.release.promise;
      held.waiting--;
    }
    return turnModel.complete(request);
  },
};
export const TOOL_CALL_ID = "call_1";
export const PROMPT = "Run the benchmark.";

const noop = tool({
  name: "noop",
  description: "Does nothing and answers ok.",
  input: z.object({ query: z.string() }),
  handler: async () => "ok",
});

/** A zero-latency model: one tool call on the first turn, a text answer after the tool result. */
export const turnModel = {
  name: "bench-turns",
  async complete(request) {
    const last = request.messages.at(-1);
    if (last?.role === "tool") return textResponse("done");
    return toolCallResponse([{ name: "noop", input: { query: "harnessx" }, id: TOOL_CALL_ID }]);
  },
};

/** Both benchmark agents, fresh (each process builds its own, as a `harnessx worker` would). */
export function benchAgents() {
  const logger = pino({ level: "silent" });
  return [
    new Agent({ provider: turnModel, config: { name: RUN_AGENT }, tools: [noop], logger }),
    new Agent({
      provider: turnModel,
      config: { name: PARKED_AGENT },
      tools: [noop],
      permissions: new PermissionManager({
        rules: [{ tool: "noop", decision: "ask", reason: "the benchmark parks it" }],
      }),
      logger,
    }),
    new Agent({ provider: heldModel, config: { name: HELD_AGENT }, tools: [noop], logger }),
  ];
}

/** Throws unless `result` is a completed (provider → tool → provider) run. */
export function checkCompleted(result) {
  const messages = result?.messages ?? [];
  const tool = messages[2]?.content?.[0];
  if (
    result?.status !== "completed" ||
    messages.length !== 4 ||
    tool?.type !== "tool_result" ||
    tool.content !== "ok"
  ) {
    throw new Error(
      `expected a completed run of provider → noop → provider, got ${JSON.stringify(result).slice(0, 400)}`,
    );
  }
}
