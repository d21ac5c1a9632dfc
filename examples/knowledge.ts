// Knowledge bundles: named folders of .md / .txt documents. `new Agent({ knowledge })` adds
// `knowledge_search` ({ query, bundle?, limit? } → ranked hits { bundle, path, score, snippet },
// BM25 through MiniSearch, the index built on the first search and reused) and `knowledge_read`
// ({ bundle, path } → the document; paths that leave the bundle are refused), and emits
// KNOWLEDGE_ACCESSED for each call.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Agent, HookEvent, type KnowledgeHit, type ProviderRequest } from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

const here = path.dirname(fileURLToPath(import.meta.url));

/** The text of the last tool result the model was sent. */
const lastToolResult = (request: ProviderRequest): string => {
  const blocks = request.messages.flatMap((message) => message.content);
  const last = blocks.findLast((block) => block.type === "tool_result");
  return last?.type === "tool_result" ? last.content : "";
};

const provider = new ScriptedProvider([
  toolCallResponse([{ name: "knowledge_search", input: { query: "hotel receipt", limit: 3 } }]),
  (request) => {
    const hits = JSON.parse(lastToolResult(request)) as KnowledgeHit[];
    console.log("hits, best first:");
    for (const hit of hits) console.log(`  ${hit.bundle}/${hit.path}: ${hit.snippet}`);
    const best = hits[0] as KnowledgeHit;
    return toolCallResponse([
      { name: "knowledge_read", input: { bundle: best.bundle, path: best.path } },
      { name: "knowledge_read", input: { bundle: "handbook", path: "../skills.ts" } },
    ]);
  },
  textResponse("Keep the hotel receipt and submit it within 30 days."),
]);

const agent = new Agent({
  provider,
  knowledge: [{ name: "handbook", path: path.join(here, "knowledge", "handbook") }],
});

agent.hooks.on(HookEvent.KNOWLEDGE_ACCESSED, ({ data }) => {
  const detail =
    data.tool === "knowledge_search"
      ? `query=${JSON.stringify(data.query)} hits=${data.hits}`
      : `path=${data.path} bodyChars=${data.bodyChars}`;
  console.log(`KNOWLEDGE_ACCESSED ${data.tool} found=${data.found} ${detail}`);
});
agent.hooks.afterTool(({ data }) => {
  if (data.toolCall.name !== "knowledge_read") return;
  const firstLine = data.result.content.split("\n")[0];
  console.log(
    `knowledge_read ${String(data.toolCall.input.path)} -> ${data.result.isError ? "error: " : ""}${firstLine}`,
  );
});

const result = await agent.run("How do I claim a hotel night?");
console.log(`run: ${result.status}: ${result.output}`);
