// Real models on OpenAI-compatible servers: Ollama or vLLM on your machine (no key), Groq or any
// hosted one (a key and its own options). Set OLLAMA_BASE_URL (e.g. http://127.0.0.1:11434/v1)
// to talk to a real Ollama; without it a local stand-in answers, so the example runs anywhere.
import { pino } from "pino";
import { z } from "zod";
import { Agent, openaiProvider, tool } from "../src/index.js";
import { startFakeChatServer } from "./support/fake-chat-server.js";

const weather = tool({
  name: "get_weather",
  description: "Current weather for a city.",
  input: z.object({ city: z.string() }),
  handler: async ({ city }) => `${city}: sunny, 21 °C`,
});
const quiet = pino({ level: "silent" });

const real = process.env.OLLAMA_BASE_URL;
const local = real === undefined ? await startFakeChatServer("Lisbon is sunny, 21 °C.") : undefined;
const baseURL = real ?? local?.url ?? "";
console.log(
  `mode: ${real === undefined ? "local stand-in server (no network)" : `Ollama at ${real}`}`,
);

// Ollama / vLLM / LM Studio: a baseURL and no key. `maxTokens` goes as `max_tokens` (what these
// servers read) and no `prompt_cache_key` is sent (servers that do not know it answer 400).
const ollama = new Agent({
  provider: openaiProvider({ model: "qwen3", api: "chat", baseURL }),
  tools: [weather],
  config: { maxTokens: 512, promptCaching: true },
  logger: quiet,
});
const result = await ollama.run("Weather in Lisbon?");
console.log(
  `ollama: ${result.status}, output ${JSON.stringify(result.output)}, stopReason ${result.stopReason}`,
);
const thinking = result.messages.at(-1)?.content.find((block) => block.type === "thinking");
console.log(
  `reasoning kept as thinking: ${JSON.stringify(thinking?.type === "thinking" ? thinking.text : null)}`,
);
if (local !== undefined) {
  const first = local.bodies[0] ?? {};
  console.log(
    `sent max_tokens: ${String(first.max_tokens)}, prompt_cache_key sent: ${"prompt_cache_key" in first}`,
  );
}

// Groq (or Cerebras, NIM…): its own base URL and key, and any field it takes through `extraBody`,
// merged into every request body.
const groq = new Agent({
  provider: openaiProvider({
    model: "llama-3.3-70b-versatile",
    api: "chat",
    baseURL: real === undefined ? baseURL : "https://api.groq.com/openai/v1",
    apiKey: process.env.GROQ_API_KEY ?? "gsk-example-not-a-key",
    extraBody: { parallel_tool_calls: false, service_tier: "on_demand" },
  }),
  tools: [weather],
  logger: quiet,
});
if (local !== undefined) {
  const streamed = await groq.run("Weather in Lisbon?");
  console.log(`groq: ${streamed.status}, output ${JSON.stringify(streamed.output)}`);
  const body = local.bodies.at(-1) ?? {};
  console.log(
    `extraBody sent: parallel_tool_calls=${String(body.parallel_tool_calls)}, service_tier=${String(body.service_tier)}`,
  );
  await local.close();
}
