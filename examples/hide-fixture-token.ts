// Result middleware: HideFixtureToken rewrites tool results before they enter the conversation,
// returning a new ToolResult that keeps `toolCallId` and `isError`. A handler that throws becomes
// an error result (`isError: true`), and that result passes through result middleware too.
import { z } from "zod";
import { Agent, Middleware, type ToolResult, tool } from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

class HideFixtureToken extends Middleware {
  override async afterToolExecution(result: ToolResult): Promise<ToolResult> {
    return { ...result, content: result.content.replaceAll("fixture-token", "[redacted]") };
  }
}

const readConfig = tool({
  name: "read_config",
  description: "Return a fixture configuration file.",
  input: z.object({ name: z.string() }),
  handler: async ({ name }) => {
    if (name === "missing") throw new Error("no config named missing (fixture-token=abc)");
    return `api_url=https://example.test\napi_key=fixture-token`;
  },
});

const provider = new ScriptedProvider([
  toolCallResponse([
    { name: "read_config", input: { name: "app" } },
    { name: "read_config", input: { name: "missing" } },
  ]),
  textResponse("I read the config."),
]);

const agent = new Agent({ provider, tools: [readConfig] });
agent.middleware.add(new HideFixtureToken());

const result = await agent.run("Show me the app config");
console.log(`status: ${result.status}`);

// What the model saw on its second turn: the processed results, in the model's call order.
for (const message of result.messages) {
  for (const block of message.content) {
    if (block.type !== "tool_result") continue;
    console.log(`${block.toolCallId} isError=${block.isError}: ${JSON.stringify(block.content)}`);
  }
}
const leaked = JSON.stringify(result.messages).includes("fixture-token");
console.log(`"fixture-token" left in the conversation: ${leaked}`);
