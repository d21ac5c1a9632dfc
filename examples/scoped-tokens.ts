// Who may decide (SPEC §7.1): a dashboard token entry may carry globs of the tools and agents it
// decides. Here "support" may decide refunds only; its inbox shows only refunds, and its
// decision on a database drop is refused with 403 `forbidden`. "dba" decides that one.
import { pino } from "pino";
import { z } from "zod";
import {
  Agent,
  AgentRuntime,
  createDashboard,
  memoryBackend,
  PermissionManager,
  tool,
} from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

const SUPPORT = "support-token-0123456789";
const DBA = "dba-token-0123456789abcd";
const logger = pino({ level: "silent" });
const asks = new PermissionManager({
  default: "allow",
  rules: [
    { tool: "refund_*", decision: "ask", reason: "refunds need a person" },
    { tool: "drop_*", decision: "ask", reason: "drops need a DBA" },
  ],
});
const oneCall = (name: string, input: Record<string, unknown>) =>
  new ScriptedProvider(
    [
      async (request) =>
        request.messages.at(-1)?.role === "tool"
          ? textResponse("Done.")
          : toolCallResponse([{ name, input }]),
    ],
    { loop: true },
  );
const handler = async () => "ok";
const agents = [
  new Agent({
    config: { name: "support" },
    provider: oneCall("refund_order", { orderId: "7" }),
    tools: [
      tool({
        name: "refund_order",
        description: "Refund.",
        input: z.object({ orderId: z.string() }),
        handler,
      }),
    ],
    permissions: asks,
    logger,
  }),
  new Agent({
    config: { name: "dbops" },
    provider: oneCall("drop_table", { table: "orders_2019" }),
    tools: [
      tool({
        name: "drop_table",
        description: "Drop.",
        input: z.object({ table: z.string() }),
        handler,
      }),
    ],
    permissions: asks,
    logger,
  }),
];

const runtime = new AgentRuntime({ agents, backend: memoryBackend(), logger });
await runtime.start();
const server = await createDashboard({
  runtime,
  tokens: {
    support: { token: SUPPORT, tools: ["refund_*"] },
    dba: { token: DBA, agents: ["dbops"], tools: ["drop_*"] },
  },
}).listen({ port: 0 });
const api = (path: string, token: string, body?: unknown) =>
  fetch(new URL(path, server.url), {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

const refund = await runtime.submit("support", "refund order 7");
const drop = await runtime.submit("dbops", "clean up");
await Promise.all([refund.result(), drop.result()]);
for (const [name, token] of [
  ["support", SUPPORT],
  ["dba", DBA],
] as const) {
  const { approvals } = (await (await api("api/approvals", token)).json()) as {
    approvals: Array<{ name: string }>;
  };
  console.log(`${name}'s inbox: ${approvals.map((each) => each.name).join(", ")}`);
}
const refused = await api(`api/runs/${drop.runId}/calls/call_1/approve`, SUPPORT, {});
const { error } = (await refused.json()) as { error: { code: string } };
console.log(`support approves the drop: ${refused.status} ${error.code}`);
const approved = await api(`api/runs/${refund.runId}/calls/call_1/approve`, SUPPORT, {});
console.log(`support approves the refund: ${approved.status}`);
const dba = await api(`api/runs/${drop.runId}/calls/call_1/deny`, DBA, { reason: "keep it" });
console.log(`dba denies the drop: ${dba.status}`);
console.log(`runs: ${(await refund.result()).status}, ${(await drop.result()).status}`);
await server.close();
await runtime.close();
