// Research and write (SPEC §14): agents as tools, a handoff and a structured answer, in one run.
// The lead asks the researcher (an agent used as a tool: `researcher.asTool()`) about each topic
// in one turn, then hands the conversation to the writer (`handoffs: [writer]` adds the tool
// `transfer_to_writer`), whose answer must be JSON matching a zod schema (`config.output`); an
// answer that does not match goes back to the model with what failed. Run directly, each child
// runs inline; on a runtime each research call is a durable child run of its own, the lead
// waits holding no worker, and the whole tree can be listed, watched and cancelled.
// The models are scripted (examples/support/research-team.ts) so that it runs offline.
import { pino } from "pino";
import { AgentRuntime, HookEvent, memoryBackend } from "../src/index.js";
import { Article, researchTeam } from "./support/research-team.js";

const logger = pino({ level: "silent" });
const BRIEF = "Lisbon: trams, pastries";
const { lead, researcher, writer } = researchTeam(logger);
lead.hooks.on(HookEvent.HANDOFF, ({ data }) => console.log(`handoff: ${data.from} -> ${data.to}`));

// A direct run: the research calls run their children inline, in the lead's tool calls.
const direct = await lead.run(BRIEF);
console.log(`direct: ${direct.status} under ${direct.agent}, ${direct.iterations} model calls`);

// The same agents on a runtime (memory here; redisBackend() for several processes).
const runtime = new AgentRuntime({
  agents: [lead, researcher, writer],
  backend: memoryBackend(),
  logger,
});
await runtime.start();
const handle = await runtime.submit("lead", BRIEF);
const result = await handle.result();
console.log(`durable: ${result.status} under ${result.agent}`);
// `lead` is typed by its own output (text); after a handoff the output is the finishing
// agent's, so narrow by `result.agent` and parse with the writer's schema.
const article = result.agent === "writer" ? Article.parse(result.output) : undefined;
console.log(`title: ${article?.title ?? "(none)"}`);
console.log(`body: ${article?.body ?? "(none)"}`);
// The writer's first answer had no body: it went back to the model with what failed.
const sentBack = result.messages.slice(1).filter((message) => message.role === "user");
for (const message of sentBack) {
  const [block] = message.content;
  console.log(`sent back: ${block?.type === "text" ? block.text.split(". ")[0] : ""}`);
}

// The run tree: the root and its children, each a run of its own.
const short = (runId: string) => runId.replace(handle.runId, "<run>");
const tree = await runtime.list({ rootRunId: handle.runId });
for (const run of tree.runs.toReversed()) {
  console.log(`tree: ${short(run.runId)} ${run.agent} ${run.status}`);
}
const childId = `${handle.runId}.research_1`;
const child = await runtime.get(childId);
const notes = (await runtime.handle(childId).result()).output;
console.log(`child: ${child.agent}, parent ${short(child.parentRunId ?? "?")}: ${notes}`);
const { events } = await runtime.events(handle.runId);
console.log(
  `lead's events: ${events
    .filter((event) => event.type === "child_started" || event.type === "child_finished")
    .map((event) => event.type)
    .join(", ")}`,
);
await runtime.close();
