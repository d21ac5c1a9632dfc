// Handoffs and structured output (SPEC §14): a lead agent hands the conversation to a writer
// (`handoffs: [writer]` adds the tool `transfer_to_writer`); the writer's answer must be JSON
// matching its zod schema (`config.output`), and `result.output` is the parsed, typed value.
// An answer that does not match goes back to the model with what failed. The same agents run
// durably on a runtime: the run keeps its id, and its record keeps the agent it is under.
import { pino } from "pino";
import { z } from "zod";
import { Agent, AgentRuntime, HookEvent, memoryBackend } from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

const silentLogger = pino({ level: "silent" });

const Article = z.object({ title: z.string(), body: z.string() });

// Fake models stand in for real ones (openaiProvider, anthropicProvider ask for the schema natively).
const writerModel = () =>
  new ScriptedProvider([
    textResponse('{"title":"Lisbon in spring"}'), // no body: sent back with what failed
    textResponse('{"title":"Lisbon in spring","body":"Sunny, 21 °C, and the jacarandas."}'),
  ]);
const leadModel = () =>
  new ScriptedProvider([toolCallResponse([{ name: "transfer_to_writer", input: {} }])]);

const makeAgents = () => {
  const writer = new Agent({
    provider: writerModel(),
    logger: silentLogger,
    config: { name: "writer", systemPrompt: "You write short articles.", output: Article },
  });
  const lead = new Agent({
    provider: leadModel(),
    handoffs: [writer],
    logger: silentLogger,
    config: { name: "lead", systemPrompt: "Hand writing tasks to the writer." },
  });
  lead.hooks.on(HookEvent.HANDOFF, ({ data }) =>
    console.log(`handoff: ${data.from} -> ${data.to}`),
  );
  return { lead, writer };
};

// A direct run.
const direct = makeAgents();
const result = await direct.lead.run("Write about Lisbon in spring", { runId: "article-1" });
console.log(`direct: ${result.status} under ${result.agent}, run ${result.runId}`);
// `lead.run` is typed by the lead's own output (text); after a handoff the output is the
// finishing agent's, so it is narrowed by `result.agent` and the writer's schema.
const article = result.agent === "writer" ? Article.parse(result.output) : undefined;
console.log(`title: ${article?.title ?? "(none)"}`);
console.log(`iterations: ${result.iterations} (one answer sent back)`);

// The same on a runtime: the summary names the submitted agent, the result the finishing one.
const durable = makeAgents();
const runtime = new AgentRuntime({
  agents: [durable.lead, durable.writer],
  backend: memoryBackend(),
  logger: silentLogger,
});
await runtime.start();
const handle = await runtime.submit("lead", "Write about Lisbon in spring");
const stored = await handle.result();
const [summary] = (await runtime.list({})).runs;
console.log(`durable: ${stored.status} under ${stored.agent}, summary agent ${summary?.agent}`);
console.log(`stored output: ${JSON.stringify(stored.output)}`);
await runtime.close();
