// The dashboard's decision endpoints with SPEC §7.1's forms: approve with an edit, respond, a
// quorum inbox item; over a real runtime on memory and on Redis, by Node's fetch.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { AgentRuntime, createDashboard } from "../../src/index.js";
import { body } from "./dashboard-api-contract.js";
import { wireAgent } from "./decisions-contract.js";
import { memoryAndRedisBackends, silent } from "./fixtures.js";
import { requireRedis } from "./redis.js";

const TOKENS = { alice: "alice-token-0123456789abcdef", bob: "bob-token-0123456789abcdefgh" };
const headers = (token: string) => ({
  authorization: `Bearer ${token}`,
  "content-type": "application/json",
});

beforeAll(async () => {
  await requireRedis();
});
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const backends = memoryAndRedisBackends(closers);

describe.each(backends)("the decision endpoints on %s", (_name, backend) => {
  async function serve(approvals = 1) {
    const bank = wireAgent(approvals);
    const runtime = new AgentRuntime({ agents: [bank.agent], backend: backend(), logger: silent });
    await runtime.start();
    closers.push(() => runtime.close({ timeoutMs: 5000 }));
    const server = await createDashboard({ runtime, tokens: TOKENS }).listen({ port: 0 });
    closers.push(() => server.close());
    const handle = await runtime.submit("bank", "pay acme");
    expect((await handle.result()).status).toBe("awaiting_approval");
    const post = (what: string, payload: unknown, token = TOKENS.alice) =>
      fetch(new URL(`api/runs/${handle.runId}/calls/call_1/${what}`, server.url), {
        method: "POST",
        headers: headers(token),
        body: JSON.stringify(payload),
      });
    const inbox = async () =>
      (await body(
        await fetch(new URL("api/approvals", server.url), { headers: headers(TOKENS.alice) }),
      )) as { approvals: Array<{ approvals?: { needed: number; given: Array<{ by: string }> } }> };
    return { bank, runtime, handle, post, inbox };
  }

  it("approves with an edit; refuses a bad one with 400 and its code", async () => {
    const { bank, handle, post } = await serve();
    const invalid = await post("approve", { input: { to: "acme", amount: "x" } });
    expect(invalid.status).toBe(400);
    expect((await body(invalid)).error.code).toBe("input_invalid");
    const refused = await post("approve", { input: { to: "acme", amount: 9000 } });
    expect(refused.status).toBe(400);
    expect((await body(refused)).error.code).toBe("approval_refused");
    const badBody = await post("approve", { input: "not an object" });
    expect(badBody.status).toBe(400);
    expect((await body(badBody)).error.code).toBe("body_invalid");

    const ok = await post("approve", { reason: "smaller", input: { to: "acme", amount: 50 } });
    expect(ok.status).toBe(200);
    expect(await body(ok)).toEqual({ decided: "allow" });
    expect((await handle.result()).status).toBe("completed");
    expect(bank.wired).toEqual([{ to: "acme", amount: 50 }]);
    const again = await post("approve", {});
    expect(again.status).toBe(409);
    expect((await body(again)).error.code).toBe("already_decided");
  });

  it("responds in the tool's place; a response over the limit is a 400 and nothing is recorded", async () => {
    const { bank, runtime, handle, post } = await serve();
    const big = await post("respond", { content: "x".repeat(2_000_000) });
    expect(big.status).toBe(400);
    expect((await body(big)).error.code).toBe("input_too_large");
    expect((await runtime.get(handle.runId)).decisions).toEqual([]);
    const missing = await post("respond", { isError: true });
    expect(missing.status).toBe(400);

    const ok = await post("respond", { content: "use the other account" });
    expect(await body(ok)).toEqual({ decided: "respond" });
    const done = await handle.result();
    expect(done.output).toBe("Done: [checked] use the other account");
    expect(bank.wired).toEqual([]);
    expect((await runtime.get(handle.runId)).decisions).toMatchObject([
      { decision: "respond", by: "alice" },
    ]);
  });

  it("a quorum item shows given/needed in the inbox; the same token twice is a 409", async () => {
    const { bank, handle, post, inbox } = await serve(2);
    expect((await inbox()).approvals[0]?.approvals).toEqual({ needed: 2, given: [] });
    expect((await post("approve", {})).status).toBe(200);
    expect((await inbox()).approvals[0]?.approvals?.given.map((each) => each.by)).toEqual([
      "alice",
    ]);
    const repeated = await post("approve", {});
    expect(repeated.status).toBe(409);
    expect((await body(repeated)).error.code).toBe("approver_repeated");
    expect((await post("approve", {}, TOKENS.bob)).status).toBe(200);
    expect((await handle.result()).status).toBe("completed");
    expect(bank.wired).toHaveLength(1);
  });
});
