// Hooks observe a run without changing it: `hooks.on(HookEvent.TOOL_CALL_END, …)` with `ctx.data`
// typed by the event, the beforeTool / afterTool / onError shortcuts, each returning a
// Registration whose close() removes it. HOOK_PAYLOADS holds each event's runtime zod schema.
import { pino } from "pino";
import { z } from "zod";
import { Agent, HOOK_PAYLOADS, HookEvent, ToolCallEndData, tool } from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

const search = tool({
  name: "search",
  description: "Return a fixture search result for the requested query.",
  input: z.object({ query: z.string() }),
  handler: async ({ query }) => {
    if (query === "") throw new Error("empty query");
    return `Results for ${query}`;
  },
});

const provider = new ScriptedProvider(
  [
    toolCallResponse([
      { name: "search", input: { query: "hooks" } },
      { name: "search", input: { query: "" } },
    ]),
    textResponse("Done."),
  ],
  { loop: true },
);

// A silent logger: a throwing hook is logged at warn and otherwise ignored.
const agent = new Agent({ provider, tools: [search], logger: pino({ level: "silent" }) });

const registration = agent.hooks.on(HookEvent.TOOL_CALL_END, (ctx) => {
  const { result } = ctx.data; // typed as ToolCallEndData
  console.log(`Tool result: ${result.toolCallId} error: ${result.isError}`);
});
const sameSchema = HOOK_PAYLOADS[HookEvent.TOOL_CALL_END] === ToolCallEndData;
console.log(`HOOK_PAYLOADS[TOOL_CALL_END] is ToolCallEndData: ${sameSchema}`);

const before = agent.hooks.beforeTool((ctx) => {
  console.log(`before tool: ${ctx.data.toolCall.name}(${JSON.stringify(ctx.data.toolCall.input)})`);
});
const after = agent.hooks.afterTool(async (ctx) => {
  console.log(
    `after tool: ${ctx.data.toolCall.name} -> ${JSON.stringify(ctx.data.result.content)}`,
  );
});
const onError = agent.hooks.onError((ctx) => {
  console.log(`on error: ${ctx.data.error.message} (phase ${ctx.data.phase})`);
});
// Observer exceptions are suppressed: this one does not stop the run or the other hooks.
const broken = agent.hooks.on(HookEvent.AGENT_END, (ctx) => {
  console.log(`agent end: ${ctx.data.result.status}`);
  throw new Error("a broken observer");
});

const first = await agent.run("Search twice");
console.log(`first run: ${first.status}: ${first.output}`);

for (const each of [registration, before, after, onError, broken]) each.close();
const second = await agent.run("Search twice again");
console.log(`second run with every hook closed (no hook lines): ${second.status}`);
