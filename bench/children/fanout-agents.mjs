// The agents of bench:children's fan-out (children.mjs, children/trace-fanout.mjs): "lead",
// whose first turn calls "researcher" as an agent tool `children` times, and "researcher",
// which answers at once (zero-latency models).
import { pino } from "pino";
import { Agent } from "../../dist/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../dist/testing.js";

const logger = pino({ level: "silent" });

/** [lead, researcher], the lead fanning out to `children` calls of the researcher. */
export function fanOutAgents(children) {
  const researcher = new Agent({
    provider: new ScriptedProvider([textResponse("notes")], { loop: true }),
    config: { name: "researcher" },
    logger,
  });
  const calls = Array.from({ length: children }, (_, index) => ({
    name: "research",
    input: { input: `topic ${index}` },
    id: `c${index}`,
  }));
  const lead = new Agent({
    provider: new ScriptedProvider([toolCallResponse(calls), textResponse("done")], { loop: true }),
    config: { name: "lead" },
    tools: [researcher.asTool({ name: "research", description: "Research" })],
    logger,
  });
  return [lead, researcher];
}
