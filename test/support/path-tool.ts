import { z } from "zod";
import { tool } from "../../src/index.js";

/** A tool `name` taking `{ path }` whose handler records every input it receives. */
export function countingTool(name: string) {
  const received: Array<{ path: string }> = [];
  const definition = tool({
    name,
    description: `The ${name} tool.`,
    input: z.object({ path: z.string() }),
    handler: async (input) => {
      received.push(input);
      return `${name} done: ${input.path}`;
    },
  });
  return { tool: definition, received };
}
