// The agents of bench:children's tree part: a tree of runs 1 → WIDTHS[0] → WIDTHS[1] →
// WIDTHS[2] (root, then three levels of child runs), zero-latency models, and the leaf alone
// for the flat runs. Built the same in the bench's process and in each worker process.
import { pino } from "pino";
import { Agent } from "../../dist/index.js";
import { textResponse, toolCallResponse } from "../../dist/testing.js";

/** Children per run at each level: 1 root → 10 → 10 → 9 = 1,011 runs. */
export const WIDTHS = [10, 10, 9];
export const TREE_RUNS = 1 + WIDTHS[0] + WIDTHS[0] * WIDTHS[1] + WIDTHS[0] * WIDTHS[1] * WIDTHS[2];
export const ROOT_AGENT = "tree-root";
export const LEAF_AGENT = "tree-leaf";

/**
 * A model by turn (any number of runs share it): the first turn calls `tool` `width` times,
 * the turn after the results answers.
 */
const fanningModel = (tool, width) => ({
  name: `fans-${tool}`,
  async complete(request) {
    if (request.messages.at(-1)?.role === "tool") return textResponse("done");
    return toolCallResponse(
      Array.from({ length: width }, (_, index) => ({
        name: tool,
        input: { input: `part ${index}` },
        id: `c${index}`,
      })),
    );
  },
});

const leafModel = { name: "leaf", complete: async () => textResponse("notes") };

export function treeAgents() {
  const logger = pino({ level: "silent" });
  const leaf = new Agent({ provider: leafModel, config: { name: LEAF_AGENT }, logger });
  const lower = new Agent({
    provider: fanningModel("leaf", WIDTHS[2]),
    config: { name: "tree-lower" },
    tools: [leaf.asTool({ name: "leaf", description: "A leaf" })],
    logger,
  });
  const middle = new Agent({
    provider: fanningModel("lower", WIDTHS[1]),
    config: { name: "tree-middle" },
    tools: [lower.asTool({ name: "lower", description: "A lower run" })],
    logger,
  });
  const root = new Agent({
    provider: fanningModel("middle", WIDTHS[0]),
    config: { name: ROOT_AGENT },
    tools: [middle.asTool({ name: "middle", description: "A middle run" })],
    logger,
  });
  return [root, middle, lower, leaf];
}
