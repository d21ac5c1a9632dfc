// The agent of the byte benchmarks: a scripted model that reads pages through a tool.
import { pino } from "pino";
import { z } from "zod";
import { Agent, tool } from "../../dist/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../dist/testing.js";

/**
 * An agent named `name` whose model calls `lookup` (a fixed page of text) until the run has
 * made `iterations` provider calls; `recorder` and `systemPrompt` when given.
 */
export function readerAgent({ name, iterations, recorder, systemPrompt }) {
  const lookup = tool({
    name: "lookup",
    description: "Returns a fixed page of text.",
    input: z.object({ page: z.number() }),
    handler: async ({ page }) => `page ${page}: ${"lorem ipsum dolor sit amet ".repeat(20)}`,
  });
  const provider = new ScriptedProvider(
    [
      (request) => {
        const calls = request.messages.filter((message) => message.role === "tool").length;
        return calls + 1 >= iterations
          ? textResponse("All pages read.")
          : toolCallResponse([{ name: "lookup", input: { page: calls + 1 } }]);
      },
    ],
    { loop: true },
  );
  return new Agent({
    provider,
    tools: [lookup],
    ...(recorder ? { recorder } : {}),
    config: {
      name,
      maxIterations: iterations,
      ...(systemPrompt === undefined ? {} : { systemPrompt }),
    },
    logger: pino({ level: "silent" }),
  });
}
