// Approval notifications (SPEC §7.1): nobody has to watch the inbox. Each call that starts
// waiting for a person runs `onApprovalRequested` in the process that parked it, and is POSTed
// to `approvalWebhook`, signed (x-harnessx-signature) and with an idempotency key. The receiver
// here is Slack-style: it checks the signature, drops repeats by key (delivery is at least
// once), and turns each request into a chat message (printed here; a real one would POST it to
// a Slack incoming-webhook URL). Its first answer is a 503, to show the retry.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { z } from "zod";
import {
  Agent,
  AgentRuntime,
  type ApprovalRequest,
  memoryBackend,
  PermissionManager,
  tool,
  verifyApprovalSignature,
} from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

const SECRET = process.env.HARNESSX_APPROVAL_WEBHOOK_SECRET ?? "example-webhook-secret-0123";

// ---- the receiver: what your chat bridge runs ----------------------------------------------
const seen = new Set<string>();
let answered = 0;
let delivered: () => void = () => {};
const messageDelivered = new Promise<void>((resolve) => {
  delivered = resolve;
});
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    const body = Buffer.concat(chunks);
    answered += 1;
    if (!verifyApprovalSignature(body, request.headers["x-harnessx-signature"], SECRET)) {
      console.log("receiver: bad signature, refused");
      response.writeHead(401).end();
      return;
    }
    if (answered === 1) {
      console.log("receiver: busy (503), harnessx will retry");
      response.writeHead(503).end();
      return;
    }
    const key = String(request.headers["idempotency-key"]);
    if (seen.has(key)) {
      response.writeHead(200).end(); // a repeat: already posted
      return;
    }
    seen.add(key);
    const item = JSON.parse(body.toString()) as ApprovalRequest;
    const slack = {
      text: `:raised_hand: *${item.agent}* wants \`${item.name}\` ${JSON.stringify(item.input)} (${item.reason})`,
      blocks_hint: `approve: POST /api/runs/${item.runId}/calls/${item.toolCallId}/approve`,
    };
    console.log(`receiver: slack message ${slack.text}`);
    response.writeHead(200).end();
    delivered();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const { port } = receiver.address() as AddressInfo;

// ---- the harnessx side ---------------------------------------------------------------------
const wire = tool({
  name: "wire_money",
  description: "Wire money to an account.",
  input: z.object({ amount: z.number(), iban: z.string(), apiKey: z.string() }),
  handler: async ({ amount }) => `Wired ${amount}.`,
});
const agent = new Agent({
  config: { name: "treasury" },
  provider: new ScriptedProvider([
    toolCallResponse([
      { name: "wire_money", input: { amount: 900, iban: "DE89 3704", apiKey: "sk-live-1" } },
    ]),
    textResponse("The transfer is done."),
  ]),
  tools: [wire],
  permissions: new PermissionManager({
    default: "allow",
    rules: [{ tool: "wire_*", decision: "ask", reason: "money moves need a person" }],
  }),
  logger: pino({ level: "silent" }),
});

const runtime = new AgentRuntime({
  agents: [agent],
  backend: memoryBackend(), // on Redis the webhook is a BullMQ job that survives a crash
  logger: pino({ level: "silent" }),
  onApprovalRequested: (item) => console.log(`listener: ${item.name} waits (${item.reason})`),
  approvalWebhook: {
    url: `http://127.0.0.1:${port}/harnessx`,
    secret: SECRET,
    backoffMs: 50,
  },
});
await runtime.start();
const handle = await runtime.submit("treasury", "Pay the supplier");
const parked = await handle.result();
console.log(`run: ${parked.status}`);
await messageDelivered;
console.log(`receiver: ${answered} deliveries, ${seen.size} message`);
await runtime.approve(handle.runId, parked.pending[0]?.toolCallId ?? "", { by: "cfo" });
console.log(`run: ${(await handle.result()).output}`);
await runtime.close();
receiver.close();
