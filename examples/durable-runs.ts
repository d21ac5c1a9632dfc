// Durable runs with AgentRuntime on the embedded (in-memory) backend: submit runs, follow one's
// events, approve a parked call, list runs. With redisBackend({ url }) instead of memoryBackend()
// the same code runs across any number of worker processes (see examples/distributed/).
import { pino } from "pino";
import { AgentRuntime, HookEvent, memoryBackend } from "../src/index.js";
import { demoSupportAgent } from "../src/testing.js";

const logger = pino({ level: "silent" });
const agent = demoSupportAgent({ logger }); // scripted model: searches, asks before refunds
const phasesByRun = new Map<string, string[]>();
agent.hooks.on(HookEvent.CHECKPOINT, (ctx) => {
  const phases = phasesByRun.get(ctx.data.runId) ?? [];
  phasesByRun.set(ctx.data.runId, [...phases, ctx.data.phase]);
});

const runtime = new AgentRuntime({ agents: [agent], backend: memoryBackend(), logger });
await runtime.start();

const question = await runtime.submit("support", "Where is order 42?");
for await (const event of question.events()) {
  console.log("event:", event.type === "result" ? `result ${event.result.status}` : event.type);
}
console.log("checkpoints:", phasesByRun.get(question.runId)?.join(" → "));

const refund = await runtime.submit("support", "Refund order 7");
const parked = await refund.result();
console.log("refund run:", parked.status, parked.pending.map((each) => each.name).join(", "));
await runtime.approve(refund.runId, parked.pending[0]?.toolCallId ?? "", { by: "ops-lead" });
console.log("after approval:", (await refund.result()).output);

const second = await runtime.submit("support", "Refund order 8");
const waiting = await second.result();
await runtime.deny(second.runId, waiting.pending[0]?.toolCallId ?? "", {
  by: "ops-lead",
  reason: "not eligible",
});
console.log("after denial:", (await second.result()).output);

// A submit that must happen once takes the caller's id: the same id again is the same run, never
// a second. A rejected submit names the id it tried (error.runId), to retry with.
const once = await runtime.submit("support", "Where is order 43?", { runId: "question-43" });
const again = await runtime.submit("support", "Where is order 43?", { runId: "question-43" });
console.log("same runId, same run:", again.runId === once.runId, (await again.result()).status);
try {
  await runtime.submit("no-such-agent", "Where is order 44?", { runId: "question-44" });
} catch (error) {
  const { code, runId } = error as { code: string; runId?: string };
  console.log("rejected submit:", code, "runId", runId);
}

const completed = await runtime.list({ status: "completed" });
console.log("completed runs:", completed.runs.length);
await runtime.close();
