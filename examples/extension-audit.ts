// An extension packages a feature: here an audit that adds a tool (`audit_count`), middleware
// (it hides tokens in tool results), a hook (it counts completed tool calls) and a prompt
// provider, and keeps its count as saved state per session. Installed at start() in priority
// order; its middleware lands after middleware added before it and before middleware added
// later. Closing the agent (or the extension's registration) removes all of it and runs
// cleanup() once.
import { z } from "zod";
import {
  Agent,
  Extension,
  type ExtensionContext,
  HookEvent,
  type ToolResult,
  tool,
} from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

class Audit extends Extension {
  name = "audit";
  priority = 100;

  async install(ctx: ExtensionContext): Promise<void> {
    const counts = ctx.state("counts", { calls: 0 });
    ctx.addMiddleware({
      afterToolExecution: async (result: ToolResult) => {
        console.log("  middleware: audit");
        return { ...result, content: result.content.replaceAll(/tok-\w+/g, "[token]") };
      },
    });
    ctx.addHook(HookEvent.TOOL_CALL_END, async (hook) => {
      // Hooks run inside the run: saved state knows the session without being told.
      const { calls } = await counts.get();
      await counts.set({ calls: calls + 1 });
      console.log(`  hook: ${hook.data.toolCall.name} done, ${calls + 1} call(s) this session`);
    });
    ctx.addTool(
      tool({
        name: "audit_count",
        description: "How many tool calls this session made so far.",
        input: z.object({}),
        handler: async () => `${(await counts.get()).calls} call(s)`,
      }),
    );
    ctx.addPromptProvider(async () => `Tool calls this session: ${(await counts.get()).calls}.`);
  }

  override async cleanup(): Promise<void> {
    console.log("cleanup: audit");
  }
}

const lookup = tool({
  name: "lookup",
  description: "Return a fixture record.",
  input: z.object({ id: z.string() }),
  handler: async ({ id }) => `record ${id}, owner key tok-${id}9f`,
});

const provider = new ScriptedProvider(
  [
    toolCallResponse([{ name: "lookup", input: { id: "a1" } }]),
    toolCallResponse([{ name: "audit_count", input: {} }]),
    textResponse("Done."),
  ],
  { loop: true },
);

const agent = new Agent({ provider, tools: [lookup], extensions: [new Audit()] });
agent.middleware.add({
  afterToolExecution: async (result: ToolResult) => {
    console.log("  middleware: added before start");
    return result;
  },
});

console.log("run 1, session s1");
const first = await agent.run("Look up a1", { sessionId: "s1" });
agent.middleware.add({
  afterToolExecution: async (result: ToolResult) => {
    console.log("  middleware: added after start");
    return result;
  },
});
console.log("run 2, session s1");
await agent.run("Look up a1 again", { sessionId: "s1" });
console.log("run 3, session s2");
await agent.run("Look up a1", { sessionId: "s2" });

const toolResults = first.messages.flatMap((message) =>
  message.content.flatMap((block) => (block.type === "tool_result" ? [block.content] : [])),
);
console.log(`run 1 tool results: ${toolResults.join(" | ")}`);
console.log(`system prompt of the last request: ${provider.requests.at(-1)?.system}`);
console.log(`installed: ${agent.extensions.names.join(", ")}`);

// Installed now, on a started agent; its registration uninstalls it.
class Greeting extends Extension {
  name = "greeting";
  async install(ctx: ExtensionContext): Promise<void> {
    ctx.addPromptProvider(() => "Greet the user first.");
  }
  override async cleanup(): Promise<void> {
    console.log("cleanup: greeting");
  }
}
const registration = await agent.extensions.install(new Greeting());
console.log(`installed: ${agent.extensions.names.join(", ")}`);
await registration.close();
await agent.close();
console.log(`after close, audit_count registered: ${agent.tools.has("audit_count")}`);
