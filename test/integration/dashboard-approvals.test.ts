// The inbox filtered by agent and tool, and bulk decisions (SPEC §12.1), over a real runtime on
// the memory backend and on Redis, by Node's fetch against a listening dashboard.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { AgentRuntime, createDashboard } from "../../src/index.js";
import { body } from "./dashboard-api-contract.js";
import { approvalAgent, cleanerAgent, memoryAndRedisBackends, silent } from "./fixtures.js";
import { requireRedis } from "./redis.js";

const TOKEN = "approvals-test-token-0123456789";
const AUTH = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

beforeAll(async () => {
  await requireRedis();
});
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const backends = memoryAndRedisBackends(closers);

describe.each(backends)("the approvals API on %s", (_name, backend) => {
  async function serve() {
    const runtime = new AgentRuntime({
      agents: [approvalAgent().agent, cleanerAgent()],
      backend: backend(),
      logger: silent,
    });
    await runtime.start();
    closers.push(() => runtime.close({ timeoutMs: 5000 }));
    const server = await createDashboard({ runtime, tokens: { ops: TOKEN } }).listen({ port: 0 });
    closers.push(() => server.close());
    const url = (path: string) => new URL(path, server.url).toString();
    return { runtime, url };
  }

  it("filters the inbox by agent and by tool", async () => {
    const { runtime, url } = await serve();
    const parked = await Promise.all([
      runtime.submit("ops", "a.log"),
      runtime.submit("ops", "b.log"),
      runtime.submit("cleaner", "tmp"),
    ]);
    for (const handle of parked) expect((await handle.result()).status).toBe("awaiting_approval");
    const inbox = async (query: string): Promise<string[]> => {
      const answer = await body(await fetch(url(`api/approvals${query}`), { headers: AUTH }));
      const entries = answer.approvals as Array<{
        agent: string;
        name: string;
        input: { path: string };
      }>;
      return entries.map((entry) => `${entry.agent} ${entry.name} ${entry.input.path}`);
    };
    expect((await inbox("")).sort()).toEqual([
      "cleaner delete_cache tmp",
      "ops delete_file a.log",
      "ops delete_file b.log",
    ]);
    expect((await inbox("?agent=ops")).sort()).toEqual([
      "ops delete_file a.log",
      "ops delete_file b.log",
    ]);
    expect(await inbox("?tool=delete_cache")).toEqual(["cleaner delete_cache tmp"]);
    expect(await inbox("?agent=ops&tool=delete_cache")).toEqual([]);
    const refused = await fetch(url("api/approvals?tool="), { headers: AUTH });
    expect(refused.status).toBe(400);
    expect((await body(refused)).error.code).toBe("query_invalid");
  });

  it("decides many calls at once, each on its own, by the token's name", async () => {
    const { runtime, url } = await serve();
    const [first, second, decided] = await Promise.all([
      runtime.submit("ops", "a.log"),
      runtime.submit("ops", "b.log"),
      runtime.submit("ops", "c.log"),
    ]);
    for (const handle of [first, second, decided]) await handle.result();
    if (first === undefined || second === undefined || decided === undefined) throw new Error();
    await runtime.deny(decided.runId, "call_1", { by: "someone-else" });
    const answer = await fetch(url("api/approvals/decide"), {
      method: "POST",
      headers: AUTH,
      body: JSON.stringify({
        items: [
          { runId: first.runId, toolCallId: "call_1" },
          { runId: decided.runId, toolCallId: "call_1" },
          { runId: "no-such-run", toolCallId: "call_1" },
          { runId: second.runId, toolCallId: "call_1" },
        ],
        decision: "allow",
        reason: "batch of logs",
      }),
    });
    expect(answer.status).toBe(200);
    const { results } = await body(answer);
    expect(results).toEqual([
      { runId: first.runId, toolCallId: "call_1", ok: true },
      {
        runId: decided.runId,
        toolCallId: "call_1",
        ok: false,
        error: { code: "already_decided", message: expect.any(String) },
      },
      {
        runId: "no-such-run",
        toolCallId: "call_1",
        ok: false,
        error: { code: "run_not_found", message: expect.any(String) },
      },
      { runId: second.runId, toolCallId: "call_1", ok: true },
    ]);
    for (const handle of [first, second]) {
      expect((await handle.result()).status).toBe("completed");
      expect((await runtime.get(handle.runId)).decisions).toEqual([
        expect.objectContaining({ decision: "allow", by: "ops", reason: "batch of logs" }),
      ]);
    }
    expect((await runtime.get(decided.runId)).decisions).toEqual([
      expect.objectContaining({ decision: "deny", by: "someone-else" }),
    ]);
  });

  it("denies in bulk, and refuses a bad body or a missing token", async () => {
    const { runtime, url } = await serve();
    const handle = await runtime.submit("cleaner", "tmp");
    await handle.result();
    const post = (payload: unknown, headers: Record<string, string> = AUTH) =>
      fetch(url("api/approvals/decide"), {
        method: "POST",
        headers,
        body: JSON.stringify(payload),
      });
    const item = { runId: handle.runId, toolCallId: "call_1" };
    const unsigned = await post(
      { items: [item], decision: "deny" },
      { "content-type": "application/json" },
    );
    expect(unsigned.status).toBe(401);
    for (const bad of [
      { items: [], decision: "deny" },
      { items: [item], decision: "maybe" },
      { items: [item], decision: "deny", by: "someone" },
      { items: Array.from({ length: 101 }, () => item), decision: "deny" },
    ]) {
      const refused = await post(bad);
      expect(refused.status).toBe(400);
      expect((await body(refused)).error.code).toBe("body_invalid");
    }
    expect((await runtime.get(handle.runId)).status).toBe("awaiting_approval");
    const denied = await post({ items: [item], decision: "deny" });
    expect((await body(denied)).results).toEqual([{ ...item, ok: true }]);
    const result = await handle.result();
    expect(result.status).toBe("completed");
    expect((await runtime.get(handle.runId)).decisions).toEqual([
      expect.objectContaining({ decision: "deny", by: "ops", reason: null }),
    ]);
  });
});
