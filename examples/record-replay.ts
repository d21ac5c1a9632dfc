// The flight recorder keeps what a run sent and received, raw: each request as sent, each model
// response before response middleware, each tool result before result middleware, the
// decisions and errors. `redact` runs before anything is stored. A recording exported as JSONL
// replays the model side with ReplayProvider: the same agent gives the same run; other
// middleware shows what it would have changed; a run that goes elsewhere fails, naming where.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  Agent,
  FlightRecorder,
  type MiddlewareLike,
  type Provider,
  type ProviderResponse,
  ReplayProvider,
  tool,
} from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

const apiKey = "sk-live-7c1d";

const order = tool({
  name: "order_status",
  description: "The status of an order.",
  input: z.object({ orderId: z.string() }),
  handler: async ({ orderId }) => `order ${orderId}: shipped (carrier key ${apiKey})`,
});

/** Response middleware as deployed: it trims the model's text. */
const trim: MiddlewareLike = {
  afterLlmCall: async (response: ProviderResponse) => ({
    ...response,
    content: response.content.map((block) =>
      block.type === "text" ? { ...block, text: block.text.trim() } : block,
    ),
  }),
};

const buildAgent = (provider: Provider, middleware = [trim]) =>
  new Agent({ provider, tools: [order], middleware });

// 1. Production: record the run, redacting the key before anything is stored.
const recorder = new FlightRecorder({ redact: (text) => text.replaceAll(apiKey, "[api-key]") });
const production = new Agent({
  provider: new ScriptedProvider([
    toolCallResponse([{ name: "order_status", input: { orderId: "42" } }]),
    textResponse("  Order 42 has shipped.  "),
  ]),
  tools: [order],
  middleware: [trim],
  recorder,
});
const recorded = await production.run("Where is order 42?");
console.log(`recorded: ${recorded.status}: ${JSON.stringify(recorded.output)}`);
const entries = await recorder.entries(recorded.runId);
console.log(`entries: ${entries.map((entry) => entry.type).join(", ")}`);
const raw = entries.find((entry) => entry.type === "llm_response_raw" && entry.iteration === 2);
if (raw?.type === "llm_response_raw") {
  console.log(`raw final response (before middleware): ${JSON.stringify(raw.response.content)}`);
}
const folder = await mkdtemp(join(tmpdir(), "harnessx-"));
const file = join(folder, "run.jsonl"); // `harnessx replay run.jsonl` prints its timeline
await writeFile(file, await recorder.exportJsonl(recorded.runId));
const jsonl = await readFile(file, "utf8");
console.log(`the API key in the export: ${jsonl.includes(apiKey)}`);

// 2. Offline: the same agent against the recording gives the same run.
const same = await buildAgent(ReplayProvider.fromJsonl(jsonl)).run("Where is order 42?");
console.log(`replayed: ${same.status}: ${JSON.stringify(same.output)}`);
console.log(`same output: ${same.output === recorded.output}`);

// 3. Without the trimming middleware: the raw text comes through.
const untrimmed = await buildAgent(ReplayProvider.fromJsonl(jsonl), []).run("Where is order 42?");
console.log(`replayed without middleware: ${JSON.stringify(untrimmed.output)}`);

// 4. An agent without the tool sends another tool list: the replay fails, naming where.
const diverged = await new Agent({ provider: ReplayProvider.fromJsonl(jsonl) }).run(
  "Where is order 42?",
);
console.log(`diverged: ${diverged.error?.name}: ${diverged.error?.message}`);
await rm(folder, { recursive: true });
