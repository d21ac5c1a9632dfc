// Streaming: `agent.runStream(input)` yields RunEvents as they happen (text deltas, tool start and
// end) and always ends with `result`. Middleware that overrides afterLlmCall makes the engine
// buffer that response's deltas and emit the processed text once processing completes.
import { z } from "zod";
import { Agent, Middleware, type ProviderResponse, type RunEvent, tool } from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

const weather = tool({
  name: "weather",
  description: "Return fixture weather for a city.",
  input: z.object({ city: z.string() }),
  handler: async ({ city }) => ({ city, forecast: "sunny", celsius: 21 }),
});

const script = () => [
  toolCallResponse([{ name: "weather", input: { city: "Lisbon" } }], { text: "Checking." }),
  textResponse("Lisbon is sunny today, 21 degrees."),
];

function describeEvent(event: RunEvent): string {
  switch (event.type) {
    case "text_delta":
    case "thinking_delta":
      return `${event.type} ${JSON.stringify(event.text)}`;
    case "tool_start":
      return `tool_start ${event.toolCall.name} ${JSON.stringify(event.toolCall.input)}`;
    case "tool_end":
      return `tool_end ${event.toolCall.name} -> ${event.result.content}`;
    case "approval_required":
      return `approval_required ${event.pending.map((each) => each.name).join(", ")}`;
    case "child_started":
    case "child_finished":
      return `${event.type} ${event.childRunId}`;
    case "result":
      return `result ${event.result.status}: ${JSON.stringify(event.result.output)}`;
  }
}

// Deltas arrive as the provider sends them (the scripted provider sends 8 characters at a time).
const agent = new Agent({
  provider: new ScriptedProvider(script(), { chunkSize: 8 }),
  tools: [weather],
});
console.log("-- streamed as sent");
for await (const event of agent.runStream("Weather in Lisbon?")) console.log(describeEvent(event));

class Shout extends Middleware {
  override async afterLlmCall(response: ProviderResponse): Promise<ProviderResponse> {
    return {
      ...response,
      content: response.content.map((block) =>
        block.type === "text" ? { ...block, text: block.text.toUpperCase() } : block,
      ),
    };
  }
}

// With afterLlmCall middleware each response's text arrives processed, as one delta.
const shouting = new Agent({
  provider: new ScriptedProvider(script(), { chunkSize: 8 }),
  tools: [weather],
  middleware: [new Shout()],
});
console.log("-- buffered by afterLlmCall middleware");
for await (const event of shouting.runStream("Weather in Lisbon?"))
  console.log(describeEvent(event));
