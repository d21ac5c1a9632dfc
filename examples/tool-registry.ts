// ToolRegistry holds tools by name. `registry.execute(call)` runs a handler directly and does NOT
// run the agent's middleware or permissions: only the agent engine gives those guarantees.
// Handlers may return a string or a JSON value (stringified); a throw becomes an error result,
// and so does a value JSON cannot represent (a BigInt, a cycle), never "[object Object]".
import { z } from "zod";
import {
  Agent,
  Middleware,
  PermissionManager,
  type ToolCall,
  ToolRegistry,
  tool,
} from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

class NormalizeSearch extends Middleware {
  override async beforeToolExecution(call: ToolCall): Promise<ToolCall> {
    const query = call.input.query;
    return call.name === "search" && typeof query === "string"
      ? { ...call, input: { ...call.input, query: query.trim() } }
      : call;
  }
}

const search = tool({
  name: "search",
  description: "Return a fixture search result for the requested query.",
  input: z.object({ query: z.string() }),
  handler: async ({ query }) => `Results for ${query}`,
});
const stats = tool({
  name: "stats",
  description: "Return fixture statistics as JSON.",
  input: z.object({}),
  handler: () => ({ documents: 3, indexed: true }),
});
const broken = tool({
  name: "broken",
  description: "Always fails.",
  input: z.object({}),
  handler: () => {
    throw new Error("the index is offline");
  },
});

const ledger = tool({
  name: "ledger",
  description: "Returns a BigInt, which JSON cannot hold.",
  input: z.object({}),
  handler: () => ({ amount: 10n }),
});

const registry = new ToolRegistry([search, stats, ledger]);
registry.register(broken);
const names = registry.schemas().map((schema) => schema.name);
console.log(`registered: ${names.join(", ")}`);
console.log(`search input schema: ${JSON.stringify(registry.get("search")?.inputSchema)}`);

const call: ToolCall = { id: "direct_1", name: "search", input: { query: "  padded  " } };
const direct = await registry.execute(call);
console.log(`registry.execute (no middleware): ${JSON.stringify(direct.content)}`);
const json = await registry.execute({ id: "direct_2", name: "stats", input: {} });
console.log(`a JSON value, stringified: ${json.content}`);
const failed = await registry.execute({ id: "direct_3", name: "broken", input: {} });
console.log(`a throwing handler: isError=${failed.isError} ${JSON.stringify(failed.content)}`);
const bigint = await registry.execute({ id: "direct_4", name: "ledger", input: {} });
console.log(`a BigInt: isError=${bigint.isError} ${JSON.stringify(bigint.content)}`);

// The same calls through an agent run the pipeline and the policy (here `broken` is denied).
const agent = new Agent({
  provider: new ScriptedProvider([
    toolCallResponse([
      { name: "search", input: { query: "  padded  " } },
      { name: "broken", input: {} },
    ]),
    textResponse("Done."),
  ]),
  tools: [search, stats, broken],
  middleware: [new NormalizeSearch()],
  permissions: new PermissionManager({ rules: [{ tool: "broken", decision: "deny" }] }),
});
const viaAgent = await agent.run("Search, then break something");
for (const block of viaAgent.messages.flatMap((message) => message.content)) {
  if (block.type === "tool_result") {
    console.log(`through the agent: ${block.toolCallId} ${JSON.stringify(block.content)}`);
  }
}
