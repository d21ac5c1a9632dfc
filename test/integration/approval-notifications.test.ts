// Approval notifications (SPEC §7.1): onApprovalRequested once per call that starts waiting, in
// the process that parked it, and the approval webhook (signed, with an idempotency key) as a
// queued job retried with backoff; neither can fail or hold up the run. On memory, Redis and
// the Cluster, against a real receiver on loopback.
import { createHmac } from "node:crypto";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { RunBackend } from "../../src/backend.js";
import {
  AgentRuntime,
  type AgentRuntimeOptions,
  type ApprovalRequest,
  type ApprovalRequestedListener,
  type ApprovalWebhookOptions,
  ConfigError,
  redisBackend,
  tool,
  verifyApprovalSignature,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { captureLogs } from "../support/log-capture.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import {
  approvalAgent,
  approvalPolicy,
  makeAgent,
  memoryAndRedisBackends,
  silent,
} from "./fixtures.js";
import { requireRedis } from "./redis.js";
import { clusterNodes, deleteClusterPrefix, uniqueClusterPrefix } from "./redis-cluster.js";

const SECRET = "webhook-secret-0123456789";

beforeAll(async () => {
  await requireRedis();
});
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** `keys`: asks to delete two keys at once (two calls waiting), its input has a secret field. */
function keysAgent() {
  const rotate = tool({
    name: "delete_key",
    description: "Deletes an API key.",
    input: z.object({ id: z.string(), apiKey: z.string() }),
    handler: async ({ id }) => `deleted ${id}`,
  });
  const provider = new ScriptedProvider(
    [
      async (request) =>
        request.messages.at(-1)?.role === "tool"
          ? textResponse("done")
          : toolCallResponse([
              { name: "delete_key", input: { id: "k1", apiKey: "sk-live-123" } },
              { name: "delete_key", input: { id: "k2", apiKey: "sk-live-456" } },
            ]),
    ],
    { loop: true },
  );
  return makeAgent("keys", { provider, tools: [rotate], permissions: approvalPolicy() });
}

const backends: Array<[string, () => RunBackend]> = [
  ...memoryAndRedisBackends(closers),
  [
    "redisBackend({ cluster })",
    () => {
      const prefix = uniqueClusterPrefix();
      closers.push(() => deleteClusterPrefix(prefix));
      return redisBackend({ cluster: clusterNodes(), prefix });
    },
  ],
];

describe.each(backends)("approval notifications on %s", (_name, backend) => {
  async function receiver(): Promise<WebhookReceiver> {
    const started = await startWebhookReceiver();
    closers.push(() => started.stop());
    return started;
  }

  async function start(options: Partial<AgentRuntimeOptions>) {
    const runtime = new AgentRuntime({
      agents: [approvalAgent().agent, keysAgent()],
      backend: backend(),
      logger: silent,
      ...options,
    });
    await runtime.start();
    closers.push(() => runtime.close({ timeoutMs: 5000 }));
    return runtime;
  }

  it("tells the listener and the webhook once per waiting call, signed and redacted", async () => {
    const hook = await receiver();
    const heard: ApprovalRequest[] = [];
    const runtime = await start({
      onApprovalRequested: (request) => {
        heard.push(request);
      },
      approvalWebhook: { url: hook.url, secret: SECRET },
    });
    const handle = await runtime.submit("keys", "rotate");
    const parked = await handle.result();
    expect(parked.status).toBe("awaiting_approval");
    const deliveries = await hook.received(2);
    const requests = deliveries.map((delivery) => JSON.parse(delivery.body) as ApprovalRequest);
    const expected = (toolCallId: string, id: string) => ({
      runId: handle.runId,
      toolCallId,
      agent: "keys",
      name: "delete_key",
      input: { id, apiKey: "[redacted]" },
      reason: "deleting needs a person",
      since: expect.any(Number),
      rootRunId: handle.runId,
    });
    const byCall = (a: ApprovalRequest, b: ApprovalRequest) =>
      a.toolCallId < b.toolCallId ? -1 : 1;
    expect(requests.sort(byCall)).toEqual([expected("call_1", "k1"), expected("call_2", "k2")]);
    expect([...heard].sort(byCall)).toEqual(requests);
    expect(requests[0]?.since).toBe((await runtime.get(handle.runId)).updatedAt);
    for (const delivery of deliveries) {
      const signature = delivery.headers["x-harnessx-signature"];
      const hex = createHmac("sha256", SECRET).update(delivery.body).digest("hex");
      expect(signature).toBe(`sha256=${hex}`);
      expect(verifyApprovalSignature(delivery.body, signature, SECRET)).toBe(true);
      expect(verifyApprovalSignature(delivery.body, signature, `${SECRET}x`)).toBe(false);
      const request = JSON.parse(delivery.body) as ApprovalRequest;
      expect(delivery.headers["idempotency-key"]).toBe(`${handle.runId}:${request.toolCallId}`);
      expect(delivery.headers["content-type"]).toBe("application/json");
      expect(delivery.body).not.toContain("sk-live");
    }
    // One decision leaves the other call waiting and the run is saved again: nobody is told
    // again; the second decision lets the run finish.
    await runtime.approve(handle.runId, "call_1", { by: "ops" });
    await runtime.approve(handle.runId, "call_2", { by: "ops" });
    expect((await handle.result()).status).toBe("completed");
    // A second run is its own request; the first run's calls are never sent again.
    const second = await runtime.submit("ops", "b.log");
    await second.result();
    const all = await hook.received(3);
    expect(JSON.parse(all[2]?.body ?? "{}")).toMatchObject({
      runId: second.runId,
      name: "delete_file",
    });
    await runtime.approve(second.runId, "call_1", { by: "ops" });
    expect((await second.result()).status).toBe("completed");
    expect(hook.deliveries).toHaveLength(3);
    expect(heard).toHaveLength(3);
  });

  it("retries a failing webhook with backoff while the run goes on", async () => {
    const hook = await receiver();
    hook.answers.push(500, 503);
    const runtime = await start({
      approvalWebhook: { url: hook.url, secret: SECRET, backoffMs: 20 },
    });
    const handle = await runtime.submit("ops", "a.log");
    expect((await handle.result()).status).toBe("awaiting_approval");
    const deliveries = await hook.received(3);
    expect(new Set(deliveries.map((each) => each.body)).size).toBe(1);
    expect(new Set(deliveries.map((each) => each.headers["idempotency-key"]))).toEqual(
      new Set([`${handle.runId}:call_1`]),
    );
    // The third try was answered 200: no fourth.
    await runtime.approve(handle.runId, "call_1", { by: "ops" });
    expect((await handle.result()).status).toBe("completed");
    expect(hook.deliveries).toHaveLength(3);
  });

  it("never lets a hanging webhook or a throwing listener hold up or fail the run", async () => {
    const hook = await receiver();
    hook.answers.push("hang");
    const logs = captureLogs("info");
    const runtime = await start({
      logger: logs.logger,
      onApprovalRequested: () => {
        throw new Error("the listener broke");
      },
      approvalWebhook: { url: hook.url, secret: SECRET, timeoutMs: 300, backoffMs: 20 },
    });
    const handle = await runtime.submit("ops", "a.log");
    expect((await handle.result()).status).toBe("awaiting_approval");
    await hook.received(1);
    // The first delivery hangs; the run is decided and finishes meanwhile.
    await runtime.approve(handle.runId, "call_1", { by: "ops" });
    expect((await handle.result()).status).toBe("completed");
    // The hung delivery timed out and was tried again, answered this time.
    const [first, second] = await hook.received(2);
    expect(second?.body).toBe(first?.body);
    await logs.waitFor((entry) => entry.msg === "onApprovalRequested failed");
    await logs.waitFor((entry) => entry.msg === "approval webhook notified");
  });
});

describe("approval notification options", () => {
  it("refuses a webhook that is not http(s) or a secret under 16 characters", () => {
    const agents = [approvalAgent().agent];
    for (const approvalWebhook of [
      { url: "ftp://example.com/hook", secret: SECRET },
      { url: "not a url", secret: SECRET },
      { url: "http://127.0.0.1/hook", secret: "short" },
      { url: "https://example.com/hook", secret: SECRET, colour: "red" },
    ]) {
      expect(
        () =>
          new AgentRuntime({
            agents,
            approvalWebhook: approvalWebhook as ApprovalWebhookOptions,
          }),
      ).toThrow(ConfigError);
    }
    expect(
      () => new AgentRuntime({ agents, approvalWebhook: { url: "ftp://x/y", secret: SECRET } }),
    ).toThrow(/approvalWebhook\.url.*http: or https:/);
    expect(
      () =>
        new AgentRuntime({
          agents,
          onApprovalRequested: "notify" as unknown as ApprovalRequestedListener,
        }),
    ).toThrow(ConfigError);
    expect(
      () =>
        new AgentRuntime({
          agents,
          approvalWebhook: { url: "https://hooks.example.com/approvals", secret: SECRET },
        }),
    ).not.toThrow();
  });
});
