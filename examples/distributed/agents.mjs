// The agents a `harnessx worker` process serves: any module exporting `agents` (an Agent[] or a
// function returning one). This one is the demo's support agent with its scripted model;
// replace it with your own agents and a real provider.
//
//   npm run build
//   node dist/cli/main.js worker --agents examples/distributed/agents.mjs --redis redis://127.0.0.1:6379
import { demoSupportAgent } from "harnessx/testing";

export const agents = () => [demoSupportAgent()];
