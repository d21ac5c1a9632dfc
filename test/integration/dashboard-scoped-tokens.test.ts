// Scoped dashboard tokens (SPEC §7.1 "Who may decide"): a token entry `{ token, tools, agents }`
// decides only calls inside its globs (403 `forbidden` otherwise, each bulk item on its own),
// and its inbox lists only those calls; over a real runtime on memory and on Redis.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { AgentRuntime, ConfigError, createDashboard } from "../../src/index.js";
import { body } from "./dashboard-api-contract.js";
import { approvalAgent, cleanerAgent, memoryAndRedisBackends, silent } from "./fixtures.js";
import { requireRedis } from "./redis.js";

const ADMIN = "scoped-test-admin-token-0123";
const FILES = "scoped-test-files-token-0123";
const CLEANER = "scoped-test-cleaner-token-01";
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

describe.each(backends)("scoped dashboard tokens on %s", (_name, backend) => {
  async function serve() {
    const runtime = new AgentRuntime({
      agents: [approvalAgent().agent, cleanerAgent()],
      backend: backend(),
      logger: silent,
    });
    await runtime.start();
    closers.push(() => runtime.close({ timeoutMs: 5000 }));
    const server = await createDashboard({
      runtime,
      tokens: {
        admin: ADMIN,
        files: { token: FILES, tools: ["delete_f*"] },
        cleaners: { token: CLEANER, agents: ["clean?r"], tools: ["delete_*"] },
      },
    }).listen({ port: 0 });
    closers.push(() => server.close());
    const url = (path: string) => new URL(path, server.url).toString();
    const [ops, cleaner] = await Promise.all([
      runtime.submit("ops", "a.log"),
      runtime.submit("cleaner", "tmp"),
    ]);
    if (ops === undefined || cleaner === undefined) throw new Error("no runs");
    for (const handle of [ops, cleaner]) {
      expect((await handle.result()).status).toBe("awaiting_approval");
    }
    return { runtime, url, ops, cleaner };
  }

  const inboxOf = async (url: (path: string) => string, token: string, query = "") => {
    const answer = await body(
      await fetch(url(`api/approvals${query}`), { headers: headers(token) }),
    );
    return (answer.approvals as Array<{ agent: string; name: string }>)
      .map((entry) => `${entry.agent} ${entry.name}`)
      .sort();
  };

  it("lists in each token's inbox only what it may decide, filters included", async () => {
    const { url } = await serve();
    expect(await inboxOf(url, ADMIN)).toEqual(["cleaner delete_cache", "ops delete_file"]);
    expect(await inboxOf(url, FILES)).toEqual(["ops delete_file"]);
    expect(await inboxOf(url, FILES, "?agent=cleaner")).toEqual([]);
    expect(await inboxOf(url, CLEANER)).toEqual(["cleaner delete_cache"]);
    expect(await inboxOf(url, CLEANER, "?tool=delete_file")).toEqual([]);
    const who = await body(await fetch(url("api/whoami"), { headers: headers(CLEANER) }));
    expect(who).toEqual({
      name: "cleaners",
      readOpen: false,
      scope: { agents: ["clean?r"], tools: ["delete_*"] },
    });
    const admin = await body(await fetch(url("api/whoami"), { headers: headers(ADMIN) }));
    expect(admin).toEqual({ name: "admin", readOpen: false });
  });

  it("refuses a decision outside the scope with 403 forbidden and records nothing", async () => {
    const { runtime, url, ops, cleaner } = await serve();
    const decide = (token: string, runId: string, verb: "approve" | "deny") =>
      fetch(url(`api/runs/${runId}/calls/call_1/${verb}`), {
        method: "POST",
        headers: headers(token),
        body: JSON.stringify({ reason: "mine?" }),
      });
    for (const [token, runId] of [
      [FILES, cleaner.runId],
      [CLEANER, ops.runId],
    ] as const) {
      for (const verb of ["approve", "deny"] as const) {
        const refused = await decide(token, runId, verb);
        expect(refused.status).toBe(403);
        expect((await body(refused)).error).toEqual({
          code: "forbidden",
          message: expect.stringContaining("may not decide"),
        });
      }
      expect((await runtime.get(runId)).decisions).toEqual([]);
      expect((await runtime.get(runId)).status).toBe("awaiting_approval");
    }
    // An unknown call of an agent in scope is the runtime's to refuse; of another agent, 403.
    const unknown = await fetch(url(`api/runs/${cleaner.runId}/calls/nope/approve`), {
      method: "POST",
      headers: headers(CLEANER),
      body: "{}",
    });
    expect(unknown.status).toBe(404);
    const elsewhere = await fetch(url(`api/runs/${ops.runId}/calls/nope/approve`), {
      method: "POST",
      headers: headers(CLEANER),
      body: "{}",
    });
    expect(elsewhere.status).toBe(403);

    const allowed = await decide(FILES, ops.runId, "approve");
    expect(allowed.status).toBe(200);
    expect((await ops.result()).status).toBe("completed");
    expect((await runtime.get(ops.runId)).decisions).toEqual([
      expect.objectContaining({ decision: "allow", by: "files" }),
    ]);
  });

  it("decides each bulk item on its own against the scope", async () => {
    const { runtime, url, ops, cleaner } = await serve();
    const answer = await fetch(url("api/approvals/decide"), {
      method: "POST",
      headers: headers(CLEANER),
      body: JSON.stringify({
        items: [
          { runId: ops.runId, toolCallId: "call_1" },
          { runId: cleaner.runId, toolCallId: "call_1" },
        ],
        decision: "deny",
      }),
    });
    expect(answer.status).toBe(200);
    expect((await body(answer)).results).toEqual([
      {
        runId: ops.runId,
        toolCallId: "call_1",
        ok: false,
        error: { code: "forbidden", message: expect.stringContaining('"delete_file"') },
      },
      { runId: cleaner.runId, toolCallId: "call_1", ok: true },
    ]);
    expect((await runtime.get(ops.runId)).status).toBe("awaiting_approval");
    expect((await cleaner.result()).status).toBe("completed");
    expect((await runtime.get(cleaner.runId)).decisions).toEqual([
      expect.objectContaining({ decision: "deny", by: "cleaners" }),
    ]);
  });

  it("gives a session cookie the scope of its token", async () => {
    const { url } = await serve();
    const session = await fetch(url("api/session"), { method: "POST", headers: headers(FILES) });
    const cookie = (session.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const answer = await body(await fetch(url("api/approvals"), { headers: { cookie } }));
    expect((answer.approvals as Array<{ name: string }>).map((entry) => entry.name)).toEqual([
      "delete_file",
    ]);
  });
});

describe("scoped token entries", () => {
  it("refuses a malformed entry with a ConfigError naming it", async () => {
    const runtime = new AgentRuntime({ agents: [], logger: silent });
    for (const entry of [
      { token: "short", tools: ["a"] },
      { token: "long-enough-token-0123456789", tools: "delete_*" },
      { token: "long-enough-token-0123456789", teams: ["x"] },
      { token: "long-enough-token-0123456789", agents: [""] },
    ]) {
      expect(() =>
        createDashboard({ runtime, tokens: { ops: entry as unknown as string } }),
      ).toThrow(ConfigError);
    }
  });
});
