// The dashboard (SPEC §12): runs, live timelines, the approvals inbox and (on Redis) the queues,
// over any AgentRuntime. This example parks a run, then decides it through the dashboard's API
// as the page would, and exits. Run it with `--serve` to keep the page open and try it in a
// browser (token: "example-token-0123456789").
import { pino } from "pino";
import { z } from "zod";
import {
  Agent,
  AgentRuntime,
  createDashboard,
  memoryBackend,
  PermissionManager,
  type RunDetail,
  tool,
} from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

const TOKEN = "example-token-0123456789";
const serve = process.argv.includes("--serve");

const refund = tool({
  name: "refund_order",
  description: "Refund an order.",
  // `apiKey` is secret by its name; `card` because the schema marks it: neither is ever shown.
  input: z.object({
    orderId: z.string(),
    apiKey: z.string(),
    card: z.object({ number: z.string().meta({ secret: true }), expiry: z.string() }),
  }),
  handler: async ({ orderId }) => `Refunded order ${orderId}.`,
});
const agent = new Agent({
  provider: new ScriptedProvider([
    toolCallResponse([
      {
        id: "call_1",
        name: "refund_order",
        input: {
          orderId: "7",
          apiKey: "sk-live-123",
          card: { number: "4111 1111 1111 1111", expiry: "12/29" },
        },
      },
    ]),
    textResponse("Done: refunded order 7."),
  ]),
  tools: [refund],
  permissions: new PermissionManager({
    default: "allow",
    rules: [{ tool: "refund_*", decision: "ask", reason: "refunds need a person" }],
  }),
  config: { name: "support" },
  logger: pino({ level: "silent" }),
});
// A second agent whose every ticket closing waits for a person: decided in bulk below.
const closeTicket = tool({
  name: "close_ticket",
  description: "Close a ticket.",
  input: z.object({ ticket: z.string() }),
  handler: async ({ ticket }) => `Closed ${ticket}.`,
});
const triage = new Agent({
  provider: new ScriptedProvider(
    [
      async (request) => {
        const last = request.messages.at(-1);
        if (last?.role === "tool") return textResponse("Closed.");
        const text = last?.content.find((block) => block.type === "text");
        const ticket = text?.type === "text" ? text.text : "?";
        return toolCallResponse([{ id: "call_1", name: "close_ticket", input: { ticket } }]);
      },
    ],
    { loop: true },
  ),
  tools: [closeTicket],
  permissions: new PermissionManager({
    rules: [{ tool: "close_ticket", decision: "ask", reason: "closing needs a person" }],
  }),
  config: { name: "triage" },
  logger: pino({ level: "silent" }),
});
const runtime = new AgentRuntime({ agents: [agent, triage], backend: memoryBackend() });
await runtime.start();
const dashboard = createDashboard({
  runtime,
  tokens: { "ops-lead": TOKEN },
  // Host names it answers besides its own address and localhost (anything else: 421).
  allowedHosts: ["dashboard.internal.example"],
});
const server = await dashboard.listen({ port: serve ? 4400 : 0, host: "127.0.0.1" });

const handle = await runtime.submit("support", "Refund order 7, please.");
console.log(`run: ${(await handle.result()).status}`);

const api = (path: string, init: RequestInit = {}) =>
  fetch(new URL(path, server.url), {
    ...init,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
  });
console.log(`without a token: ${(await fetch(new URL("api/approvals", server.url))).status}`);
const { approvals } = (await (await api("api/approvals")).json()) as {
  approvals: Array<{ toolCallId: string; name: string; input: unknown; reason: string }>;
};
for (const call of approvals) {
  console.log(`inbox: ${call.name} ${JSON.stringify(call.input)} (${call.reason})`);
}

if (serve) {
  console.log(`open ${server.url} and sign in with ${TOKEN}; Ctrl-C to stop`);
} else {
  const decided = await api(`api/runs/${handle.runId}/calls/call_1/approve`, {
    method: "POST",
    body: JSON.stringify({ reason: "order checked" }),
  });
  console.log(`approve: ${decided.status} ${JSON.stringify(await decided.json())}`);
  console.log(`run: ${(await handle.result()).output}`);
  const detail = (await (await api(`api/runs/${handle.runId}`)).json()) as RunDetail;
  const [decision] = detail.decisions;
  console.log(`decided by ${decision?.by}: ${decision?.reason}`);
  // The timeline: each model call's tokens, each save, each tool call (its input redacted).
  for (const call of detail.modelCalls ?? []) {
    console.log(
      `model call ${call.iteration}: ${call.usage.inputTokens} in, ${call.usage.outputTokens} out`,
    );
  }
  console.log(`checkpoints: ${(detail.checkpoints ?? []).map((each) => each.phase).join(" → ")}`);
  for (const call of detail.toolCalls ?? []) {
    console.log(`tool call: ${call.name} ${JSON.stringify(call.input)} → ${call.result?.content}`);
  }

  // Two tickets park; the inbox filtered by tool lists both; one request decides both.
  const tickets = await runtime.submitMany("triage", ["T-1", "T-2"]);
  for (const ticket of tickets) await ticket.result();
  const filtered = (await (await api("api/approvals?tool=close_ticket")).json()) as {
    approvals: Array<{ runId: string; toolCallId: string }>;
  };
  console.log(`inbox with tool=close_ticket: ${filtered.approvals.length} calls`);
  const bulk = await api("api/approvals/decide", {
    method: "POST",
    body: JSON.stringify({
      items: filtered.approvals.map(({ runId, toolCallId }) => ({ runId, toolCallId })),
      decision: "allow",
      reason: "both resolved",
    }),
  });
  const { results } = (await bulk.json()) as { results: Array<{ ok: boolean }> };
  console.log(`bulk approve: ${bulk.status} ${results.map((each) => each.ok).join(", ")}`);
  for (const ticket of tickets) console.log(`ticket run: ${(await ticket.result()).output}`);
  await server.close();
  await runtime.close();
}
