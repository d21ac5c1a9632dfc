// Middleware order and contract: added A then B, every stage runs A then B and B receives A's
// value (response stages do not unwind). A plain object with some stages is middleware too.
// A broken contract (a changed call.id) fails the run with a named error.
import { z } from "zod";
import {
  Agent,
  Middleware,
  type MiddlewareLike,
  type ProviderResponse,
  type ToolCall,
  type ToolResult,
  tool,
} from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

const trace: string[] = [];

class Tagger extends Middleware {
  constructor(readonly tag: string) {
    super();
  }
  override async afterLlmCall(response: ProviderResponse): Promise<ProviderResponse> {
    trace.push(`${this.tag}.afterLlmCall`);
    return response;
  }
  override async beforeToolExecution(call: ToolCall): Promise<ToolCall> {
    trace.push(`${this.tag}.beforeToolExecution`);
    return { ...call, input: { ...call.input, text: `${String(call.input.text)}+${this.tag}` } };
  }
  override async afterToolExecution(result: ToolResult): Promise<ToolResult> {
    trace.push(`${this.tag}.afterToolExecution`);
    return { ...result, content: `${result.content}|${this.tag}` };
  }
}

const echo = tool({
  name: "echo",
  description: "Echo the text.",
  input: z.object({ text: z.string() }),
  handler: ({ text }) => text,
});

const script = () =>
  new ScriptedProvider([
    toolCallResponse([{ id: "call_1", name: "echo", input: { text: "x" } }]),
    (request) => {
      const block = request.messages.at(-1)?.content[0];
      return textResponse(block?.type === "tool_result" ? block.content : "");
    },
  ]);

const agent = new Agent({ provider: script(), tools: [echo] });
agent.middleware.add(new Tagger("A"));
agent.middleware.add(new Tagger("B"));
// A plain object with one stage.
const plain: MiddlewareLike = {
  async afterToolExecution(result) {
    trace.push("plain.afterToolExecution");
    return { ...result, content: result.content.toUpperCase() };
  },
};
{
  using _scoped = agent.middleware.add(plain); // removed at the end of this block
  const result = await agent.run("Echo x");
  console.log(`output: ${result.output}`);
  console.log(`order: ${trace.join(" -> ")}`);
}
console.log(`middleware after the block: ${agent.middleware.size}`);

// Breaking the contract: a middleware that changes call.id fails the run with a named error.
const renumber: MiddlewareLike = {
  async beforeToolExecution(call) {
    return { ...call, id: "another-id" };
  },
};
const broken = new Agent({ provider: script(), tools: [echo], middleware: [renumber] });
const failed = await broken.run("Echo x");
console.log(`changed call.id: ${failed.status}, ${failed.error?.name}: ${failed.error?.message}`);
