// Any Vercel AI SDK language model as a harnessx provider: Google, Mistral, Bedrock, Groq, xAI,
// Ollama community providers… Here @ai-sdk/openai-compatible (install the AI SDK provider you
// use; harnessx needs only @ai-sdk/provider's types). Set AI_SDK_BASE_URL to a real compatible
// server; without it a local stand-in answers, so the example runs anywhere.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { pino } from "pino";
import { z } from "zod";
import { Agent, aiSdkProvider, tool } from "../src/index.js";
import { startFakeChatServer } from "./support/fake-chat-server.js";

const weather = tool({
  name: "get_weather",
  description: "Current weather for a city.",
  input: z.object({ city: z.string() }),
  handler: async ({ city }) => `${city}: sunny, 21 °C`,
});

const real = process.env.AI_SDK_BASE_URL;
const local = real === undefined ? await startFakeChatServer("Lisbon is sunny, 21 °C.") : undefined;
console.log(`mode: ${real === undefined ? "local stand-in server (no network)" : real}`);

const compatible = createOpenAICompatible({
  name: "local",
  baseURL: real ?? local?.url ?? "",
  ...(process.env.AI_SDK_API_KEY ? { apiKey: process.env.AI_SDK_API_KEY } : {}),
});
// providerOptions go with every call, keyed by the AI SDK provider's name.
const provider = aiSdkProvider(compatible.chatModel("qwen3"), {
  providerOptions: { local: { user: "example-user" } },
});
console.log(`provider: ${provider.name}, model ${provider.model}`);

const agent = new Agent({ provider, tools: [weather], logger: pino({ level: "silent" }) });
for (const mode of ["run", "runStream"] as const) {
  let result: Awaited<ReturnType<typeof agent.run>> | undefined;
  if (mode === "run") result = await agent.run("Weather in Lisbon?");
  else {
    for await (const event of agent.runStream("Weather in Lisbon?")) {
      if (event.type === "result") result = event.result;
    }
  }
  console.log(`${mode}: ${result?.status}, output ${JSON.stringify(result?.output)}`);
}
if (local !== undefined) {
  const sent = (local.bodies[1]?.messages ?? []) as Array<{ role: string }>;
  const toolMessage = sent.find((message) => message.role === "tool");
  console.log(`tool result sent back: ${JSON.stringify(toolMessage)}`);
  console.log(`providerOptions sent: user=${String(local.bodies[0]?.user)}`);
  await local.close();
}
