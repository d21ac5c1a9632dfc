// Middleware that normalises tool arguments: NormalizeSearch trims the `search` query before the
// engine validates and authorises the call, keeping `call.id`. The handler is a fixture, and
// ScriptedProvider stands in for a real model. `registration.close()` removes the middleware.
import { z } from "zod";
import { Agent, Middleware, type ToolCall, tool } from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

class NormalizeSearch extends Middleware {
  override async beforeToolExecution(call: ToolCall): Promise<ToolCall> {
    const query = call.input.query;
    if (call.name === "search" && typeof query === "string") {
      return { ...call, input: { ...call.input, query: query.trim() } };
    }
    return call;
  }
}

const search = tool({
  name: "search",
  description: "Return a fixture search result for the requested query.",
  input: z.object({ query: z.string() }),
  handler: async ({ query }) => `Results for ${query}`,
  recovery: "retry",
});

// The model asks for a search with a padded query, then answers with what the tool returned.
const provider = new ScriptedProvider(
  [
    toolCallResponse([{ name: "search", input: { query: "   harnessx   " } }]),
    (request) => {
      const last = request.messages.at(-1)?.content[0];
      return textResponse(last?.type === "tool_result" ? `I found: ${last.content}` : "nothing");
    },
  ],
  { loop: true },
);

const agent = new Agent({ provider, tools: [search] });
const registration = agent.middleware.add(new NormalizeSearch());

const normalised = await agent.run("Search for harnessx");
console.log(`with NormalizeSearch: ${normalised.status}: ${JSON.stringify(normalised.output)}`);

// To remove this middleware between runs: close its registration (closing twice does nothing).
registration.close();
registration.close();
console.log(
  `registration closed: ${registration.closed}, middleware left: ${agent.middleware.size}`,
);

const raw = await agent.run("Search for harnessx");
console.log(`without it: ${raw.status}: ${JSON.stringify(raw.output)}`);
