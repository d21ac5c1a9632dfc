// Many runs at once (SPEC §8 "Scheduling for many runs"), on the embedded backend: submit in
// bulk, priorities, a model's shared rate limit, a provider's `rate_limited` pause, and an
// approval that times out. With redisBackend({ url }) the same code runs across processes,
// and the rate limit is shared by all of them.
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { z } from "zod";
import {
  Agent,
  AgentRuntime,
  memoryBackend,
  PermissionManager,
  type Provider,
  ProviderError,
  tool,
} from "../src/index.js";
import { textResponse, toolCallResponse } from "../src/testing.js";

const logger = pino({ level: "silent" });
const firstText = (messages: Parameters<Provider["complete"]>[0]["messages"]) => {
  const block = messages[0]?.content[0];
  return block?.type === "text" ? block.text : "";
};

// A model that takes 50 ms and says which question it answered, in the order it was asked.
const asked: string[] = [];
let refusedOnce = false;
// "hold" keeps the one step slot busy until released, so that the runs after it queue up.
let release = () => {};
const held = new Promise<void>((resolve) => {
  release = resolve;
});
const model: Provider = {
  name: "demo",
  async complete(request) {
    const question = firstText(request.messages);
    if (question === "refused once" && !refusedOnce) {
      refusedOnce = true;
      throw new ProviderError("Too many requests", { code: "rate_limited", retryAfterMs: 1000 });
    }
    asked.push(question);
    if (question === "hold") await held;
    await sleep(50);
    return textResponse(`Answer to ${question}`);
  },
};
const support = new Agent({
  provider: model,
  // Shared by every run of every agent on provider "demo", model "fast", in every process.
  config: { name: "support", model: "fast", rateLimit: { requestsPerMinute: 1200 } },
  logger,
});

// An agent whose deletions wait for a person, for 300 ms at most.
const ops = new Agent({
  provider: {
    name: "demo-ops",
    async complete(request) {
      const last = request.messages.at(-1);
      if (last?.role === "tool") {
        const block = last.content[0];
        return textResponse(`Done: ${block?.type === "tool_result" ? block.content : ""}`);
      }
      return toolCallResponse([{ name: "delete_file", input: { path: "/srv/data" } }]);
    },
  },
  tools: [
    tool({
      name: "delete_file",
      description: "Delete a file.",
      input: z.object({ path: z.string() }),
      handler: async ({ path }) => `deleted ${path}`,
    }),
  ],
  permissions: new PermissionManager({ rules: [{ tool: "delete_*", decision: "ask" }] }),
  config: { name: "ops", approvalTimeoutMs: 300 },
  logger,
});

// One step at a time, so that the queue's order shows.
const runtime = new AgentRuntime({
  agents: [support, ops],
  backend: memoryBackend(),
  concurrency: { steps: 1, tools: 1 },
  logger,
});
await runtime.start();

// Bulk submit: every record and first step written in one go.
const questions = Array.from({ length: 20 }, (_, at) => `question ${at + 1}`);
const batch = await runtime.submitMany("support", questions, { sessionId: "batch-1" });
const answers = await Promise.all(batch.map((handle) => handle.result()));
console.log(
  `bulk: ${answers.filter((result) => result.status === "completed").length} of ${questions.length} completed`,
);

// Priorities: runs without one go first, then priority 1, 2, … (BullMQ's order). While the
// only step slot is busy, three runs queue up; they are served by priority, not arrival.
asked.length = 0;
const busy = await runtime.submit("support", "hold");
while (!asked.includes("hold")) await sleep(5);
const queued = [
  await runtime.submit("support", "low", { priority: 10 }),
  await runtime.submit("support", "urgent", { priority: 1 }),
  await runtime.submit("support", "normal", { priority: 5 }),
];
release();
await Promise.all([busy, ...queued].map((handle) => handle.result()));
asked.shift();
console.log(`served by priority: ${asked.join(", ")}`);

// A provider's rate_limited answer pauses the model for its retryAfterMs; then it is retried.
const refused = await (await runtime.submit("support", "refused once")).result();
console.log(`after rate_limited: ${refused.status}, ${refused.output}`);

// An approval nobody gives in time is denied by harnessx; the run goes on.
const cleanup = await runtime.submit("ops", "Clean up /srv/data");
console.log(`ops: ${(await cleanup.result()).status}`);
for await (const event of cleanup.events()) {
  if (event.type === "result") console.log(`ops after the timeout: ${event.result.output}`);
}
const [decision] = (await runtime.get(cleanup.runId)).decisions;
console.log(`audit: ${decision?.decision} by ${decision?.by} (${decision?.reason})`);

await runtime.close();
