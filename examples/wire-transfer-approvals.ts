// A two-person wire transfer with an edit (SPEC §7.1): `wire` needs two distinct approvers; the
// first reviewer cuts the amount, the second approves the same edited input, and only then does
// the handler run, with the edit. A second transfer is answered in the tool's place (`respond`),
// and an edit the policy forbids is refused before anything is recorded. On redisBackend({ url })
// the same calls work from any process (the dashboard's approve/respond buttons call them).
// Each waiting call is posted, signed, to a Slack-style webhook (here a receiver on loopback).
import { createServer } from "node:http";
import { pino } from "pino";
import { z } from "zod";
import {
  Agent,
  AgentRuntime,
  type ApprovalRequest,
  type HarnessError,
  memoryBackend,
  PermissionManager,
  tool,
  verifyApprovalSignature,
} from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

const logger = pino({ level: "silent" });

const wire = tool({
  name: "wire",
  description: "Send money to a payee.",
  input: z.object({ to: z.string(), amount: z.number().positive() }),
  handler: ({ to, amount }) => {
    console.log(`  (handler) wiring ${amount} to ${to}`);
    return `sent ${amount} to ${to}`;
  },
});

// A scripted model (no network): asks to wire 900 to the payee in the request, then reports.
const model = new ScriptedProvider(
  [
    async (request) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") {
        const result = last.content.find((block) => block.type === "tool_result");
        return textResponse(`Transfer: ${result?.type === "tool_result" ? result.content : ""}`);
      }
      const first = request.messages[0]?.content[0];
      const to = first?.type === "text" ? first.text : "unknown";
      return toolCallResponse([{ name: "wire", input: { to, amount: 900 } }]);
    },
  ],
  { loop: true },
);

const treasury = new Agent({
  provider: model,
  tools: [wire],
  permissions: new PermissionManager({
    rules: [
      { tool: "wire", decision: "ask", approvals: 2, reason: "money leaves the company" },
      { tool: "wire", when: (call) => Number(call.input.amount) > 1000, decision: "deny" },
    ],
  }),
  config: { name: "treasury" },
  logger,
});

// A Slack-style webhook: it checks the signature and posts a line per waiting call.
const SECRET = "wire-desk-webhook-secret";
const posted: string[] = [];
const slack = createServer((request, response) => {
  let body = "";
  request.on("data", (chunk: Buffer) => {
    body += chunk.toString("utf8");
  });
  request.on("end", () => {
    const signed = verifyApprovalSignature(body, request.headers["x-harnessx-signature"], SECRET);
    response.writeHead(signed ? 200 : 401).end();
    if (!signed) return;
    const item = JSON.parse(body) as ApprovalRequest;
    posted.push(`${item.name}(${JSON.stringify(item.input)}) waits: ${item.reason}`);
  });
});
await new Promise<void>((resolve) => slack.listen(0, "127.0.0.1", resolve));
const address = slack.address();
const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/`;
/** The webhook's n-th post, once it has arrived. */
async function slackPost(n: number): Promise<string | undefined> {
  while (posted.length < n) await new Promise((resolve) => setTimeout(resolve, 10));
  return posted[n - 1];
}

const runtime = new AgentRuntime({
  agents: [treasury],
  backend: memoryBackend(),
  approvalWebhook: { url, secret: SECRET },
  logger,
});
await runtime.start();

const transfer = await runtime.submit("treasury", "acme");
const parked = await transfer.result();
const [call] = parked.pending;
console.log(`transfer: ${parked.status}, ${call?.name}(${JSON.stringify(call?.input)})`);
console.log(`approvals: ${call?.approvals?.given.length}/${call?.approvals?.needed}`);
console.log(`slack: ${await slackPost(1)}`);

const toolCallId = call?.toolCallId ?? "";
const refused = await runtime
  .approve(transfer.runId, toolCallId, { by: "alice", input: { to: "acme", amount: 5000 } })
  .catch((error: HarnessError) => error.code);
console.log(`alice edits to 5000: ${refused}`);

const edit = { to: "acme", amount: 500 };
await runtime.approve(transfer.runId, toolCallId, { by: "alice", reason: "cap", input: edit });
const waiting = await transfer.result();
console.log(
  `after alice: ${waiting.status}, given by ${waiting.pending[0]?.approvals?.given.map((each) => each.by).join(", ")}`,
);
const twice = await runtime
  .approve(transfer.runId, toolCallId, { by: "alice" })
  .catch((error: HarnessError) => error.code);
console.log(`alice again: ${twice}`);

await runtime.approve(transfer.runId, toolCallId, { by: "bob", input: edit });
console.log(`after bob: ${(await transfer.result()).output}`);

const audit = (await runtime.get(transfer.runId)).decisions;
for (const entry of audit) {
  const edited =
    entry.editedInput === undefined ? "" : ` edited to ${JSON.stringify(entry.editedInput)}`;
  console.log(`audit: ${entry.by} ${entry.decision}${edited}`);
}

// Respond: a person answers in the tool's place; the handler never runs.
const second = await runtime.submit("treasury", "globex");
const secondCall = (await second.result()).pending[0]?.toolCallId ?? "";
await runtime.respond(second.runId, secondCall, {
  by: "carol",
  content: "payee not verified: no money sent",
  isError: true,
});
console.log(`respond: ${(await second.result()).output}`);

await runtime.close();
slack.close();
