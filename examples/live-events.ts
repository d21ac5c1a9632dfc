// Live events and cancel on a durable runtime: a reader sees the model's text as it streams, not
// when the run next saves; a cancel aborts a model call that never answers, and the run ends
// `cancelled` even though the provider ignores its signal. The same calls work on
// redisBackend({ url }), with the reader and the canceller in any process.
import { pino } from "pino";
import { Agent, AgentRuntime, memoryBackend, type Provider } from "../src/index.js";
import { textResponse } from "../src/testing.js";

const logger = pino({ level: "silent" });

// A model that streams its answer in three pieces, 20 ms apart.
const streaming: Provider = {
  name: "streaming",
  complete: async () => textResponse("Order 42 ships today."),
  async *stream() {
    for (const piece of ["Order 42 ", "ships ", "today."]) {
      yield { type: "text_delta", text: piece };
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    yield { type: "response", response: textResponse("Order 42 ships today.") };
  },
};

// A model that never answers and ignores its abort signal.
let aborted = false;
const stuck: Provider = {
  name: "stuck",
  complete: (_request, options) => {
    options?.signal?.addEventListener("abort", () => {
      aborted = true;
    });
    return new Promise(() => {});
  },
};

const runtime = new AgentRuntime({
  agents: [
    new Agent({ provider: streaming, config: { name: "support" }, logger }),
    new Agent({ provider: stuck, config: { name: "stuck" }, logger }),
  ],
  backend: memoryBackend(),
  logger,
});
await runtime.start();

const question = await runtime.submit("support", "Where is order 42?");
for await (const event of question.events()) {
  if (event.type === "text_delta") console.log(`delta: ${JSON.stringify(event.text)}`);
  if (event.type === "result")
    console.log(`result: ${event.result.status}: ${event.result.output}`);
}

const hanging = await runtime.submit("stuck", "Hello?");
await new Promise((resolve) => setTimeout(resolve, 50)); // its model call is under way
// `by` is kept with the run (the dashboard passes its token's name, the CLI `--by`).
await runtime.cancel(hanging.runId, { by: "ops-lead" });
const cancelled = await hanging.result();
console.log(
  `cancelled run: ${cancelled.status} (${cancelled.error?.name}), provider saw abort: ${aborted}`,
);
console.log(`cancelled by: ${(await runtime.get(hanging.runId)).cancelledBy}`);

await runtime.close();
