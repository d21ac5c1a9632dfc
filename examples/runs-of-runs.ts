// Runs of runs: an agent used as a tool by another. Run directly, the child runs inline; on a
// runtime each call's child is a durable run of its own (its id derived from the parent's run
// and call), the parent waits holding no worker, and the tree can be listed and cancelled.
import { pino } from "pino";
import { Agent, AgentRuntime, memoryBackend } from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

const logger = pino({ level: "silent" });
const lastText = (messages: readonly { content: readonly { type: string; text?: string }[] }[]) =>
  messages.at(-1)?.content.at(-1)?.text ?? "";

// The researcher answers with notes on whatever it is asked (a scripted model).
const researcher = new Agent({
  provider: new ScriptedProvider(
    [(request) => textResponse(`notes on ${lastText(request.messages)}`)],
    { loop: true },
  ),
  config: { name: "researcher" },
  logger,
});

// The lead asks for two topics in one turn, then writes from the results.
const lead = new Agent({
  provider: new ScriptedProvider(
    [
      toolCallResponse([
        { name: "research", input: { input: "otters" } },
        { name: "research", input: { input: "badgers" } },
      ]),
      (request) => {
        const results = request.messages
          .flatMap((message) => message.content)
          .flatMap((block) => (block.type === "tool_result" ? [block.content] : []));
        return textResponse(`Article from: ${results.join("; ")}`);
      },
    ],
    { loop: true },
  ),
  config: { name: "lead", maxDepth: 3 },
  tools: [researcher.asTool({ name: "research", description: "Research one topic" })],
  logger,
});

const direct = await lead.run("Write about otters and badgers");
console.log("direct:", direct.output);

const runtime = new AgentRuntime({ agents: [lead, researcher], backend: memoryBackend(), logger });
await runtime.start();
const handle = await runtime.submit("lead", "Write about otters and badgers");
const result = await handle.result();
console.log("durable:", result.output);

const detail = await runtime.get(handle.runId);
console.log(
  "children:",
  detail.children?.map((child) => child.runId.replace(handle.runId, "<run>")).join(", "),
);
const child = await runtime.get(`${handle.runId}.call_1`);
console.log("child:", child.agent, child.status, "parent", child.parentRunId === handle.runId);
const tree = await runtime.list({ rootRunId: handle.runId });
console.log("runs in the tree:", tree.runs.length);
const { events } = await runtime.events(handle.runId);
console.log(
  "child events:",
  events
    .filter((event) => event.type === "child_started" || event.type === "child_finished")
    .map((event) => event.type)
    .join(", "),
);
await runtime.close();
