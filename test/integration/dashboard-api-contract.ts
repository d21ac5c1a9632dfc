// The dashboard's JSON API (SPEC §12) over a real runtime, by Node's fetch against a listening
// server: run on the memory backend and on Redis (dashboard-api.test.ts).
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { RunBackend } from "../../src/backend.js";
import {
  AgentRuntime,
  createDashboard,
  type DashboardServer,
  PermissionManager,
  type RunPage,
  tool,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { type SseMessage, sseMessages } from "../support/sse.js";
import { approvalAgent, makeAgent, silent } from "./fixtures.js";

const TOKENS = {
  "ops-lead": "ops-lead-token-0123456789",
  "reviewer-2": "reviewer-token-0123456789",
};
/** A JSON body, typed loosely for assertions. */
// biome-ignore lint/suspicious/noExplicitAny: test assertions read bodies by path
export const body = async (response: Response): Promise<any> => response.json(); // eslint-disable-line @typescript-eslint/no-explicit-any
const bearer = (name: keyof typeof TOKENS) => ({ authorization: `Bearer ${TOKENS[name]}` });

/** An agent whose call carries a secret input field and waits for approval. */
function secretAgent() {
  const login = tool({
    name: "login",
    description: "Logs in.",
    input: z.object({ user: z.string(), password: z.string() }),
    handler: async ({ user }) => `logged in ${user}`,
  });
  return makeAgent("vault", {
    provider: new ScriptedProvider([
      toolCallResponse([
        { id: "call_1", name: "login", input: { user: "ada", password: "hunter2-secret" } },
      ]),
      textResponse("done"),
    ]),
    tools: [login],
    permissions: new PermissionManager({
      default: "allow",
      rules: [{ tool: "login", decision: "ask", reason: "logging in" }],
    }),
  });
}

const CANARY = "canary-phrase-90417";

/** `keys`: its tool marks two input fields secret by schema (names that say nothing); it asks. */
function markedSecretAgent(received: string[]) {
  const unlock = tool({
    name: "unlock",
    description: "Unlocks a device.",
    input: z.object({
      account: z.string(),
      phrase: z.string().meta({ secret: true }),
      device: z.object({ code: z.string().meta({ secret: true }), label: z.string() }),
    }),
    handler: async ({ phrase, device }) => {
      received.push(phrase, device.code);
      return `unlocked ${device.label}`;
    },
  });
  return makeAgent("keys", {
    provider: new ScriptedProvider(
      [
        toolCallResponse([
          {
            id: "call_1",
            name: "unlock",
            input: { account: "ada", phrase: CANARY, device: { code: CANARY, label: "laptop" } },
          },
        ]),
        textResponse("unlocked"),
      ],
      { loop: true },
    ),
    tools: [unlock],
    permissions: new PermissionManager({
      default: "allow",
      rules: [{ tool: "unlock", decision: "ask", reason: "unlocking" }],
    }),
  });
}

export interface ApiFactory {
  /** A backend; `shared` gives another backend on the same store (another process's), if any. */
  create(): { backend: RunBackend; shared?: () => RunBackend };
  cleanup(): Promise<void>;
}

export function describeDashboardApi(name: string, factory: ApiFactory): void {
  describe(`dashboard API on ${name}`, () => {
    const closers: Array<() => Promise<unknown>> = [];
    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close();
      await factory.cleanup();
    });

    async function setUp(
      options: { readOpen?: boolean; agents?: () => ReturnType<typeof makeAgent>[] } = {},
    ) {
      const agents = options.agents ?? (() => [approvalAgent().agent, secretAgent()]);
      const { backend, shared } = factory.create();
      const runtime = new AgentRuntime({ agents: agents(), backend, logger: silent });
      await runtime.start();
      closers.push(() => runtime.close({ timeoutMs: 5000 }));
      const server: DashboardServer = await createDashboard({
        runtime,
        tokens: TOKENS,
        ...(options.readOpen === undefined ? {} : { readOpen: options.readOpen }),
      }).listen({ port: 0 });
      closers.push(() => server.close());
      const url = (path: string) => new URL(path, server.url).toString();
      const other = async () => {
        if (shared === undefined) return runtime;
        const remote = new AgentRuntime({ agents: agents(), backend: shared(), logger: silent });
        await remote.start();
        closers.push(() => remote.close({ timeoutMs: 5000 }));
        return remote;
      };
      return { runtime, server, url, other };
    }

    const post = (url: string, headers: Record<string, string>, body?: unknown) =>
      fetch(url, {
        method: "POST",
        headers: {
          ...headers,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    it("refuses reads and writes without a known token (401), with the error shape", async () => {
      const { runtime, url } = await setUp();
      const parked = await runtime.submit("ops", "old.log");
      await parked.result();
      for (const headers of [
        {},
        { authorization: "Bearer wrong-token-0123456789" },
        { authorization: "Basic abc" },
      ]) {
        const read = await fetch(url("api/runs"), { headers });
        expect(read.status).toBe(401);
        expect(await body(read)).toEqual({
          error: { code: "unauthorized", message: expect.any(String) },
        });
        const write = await post(url(`api/runs/${parked.runId}/calls/call_1/approve`), headers, {});
        expect(write.status).toBe(401);
      }
      expect((await runtime.get(parked.runId)).decisions).toEqual([]);
      expect((await fetch(url("api/runs"), { headers: bearer("ops-lead") })).status).toBe(200);
    });

    it("answers 429 with Retry-After once one address has shown a few wrong tokens", async () => {
      const { runtime, url } = await setUp();
      const parked = await runtime.submit("ops", "old.log");
      await parked.result();
      const wrong = { authorization: "Bearer wrong-token-0123456789" };
      // Right tokens among the guesses cost nothing: they neither count nor wait.
      for (let attempt = 1; attempt <= 5; attempt += 1) {
        expect((await fetch(url("api/runs"), { headers: wrong })).status).toBe(401);
        expect((await fetch(url("api/runs"), { headers: bearer("ops-lead") })).status).toBe(200);
      }
      const refused = await post(url(`api/runs/${parked.runId}/calls/call_1/approve`), wrong, {});
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(await body(refused)).toEqual({
        error: { code: "too_many_attempts", message: expect.any(String) },
      });
      // The address is refused for the window, whatever token it shows; no decision was made.
      const right = await fetch(url("api/runs"), { headers: bearer("ops-lead") });
      expect(right.status).toBe(429);
      expect(Number(right.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect((await runtime.get(parked.runId)).decisions).toEqual([]);
    });

    it("readOpen: reads need no token, writes still do", async () => {
      const { runtime, url } = await setUp({ readOpen: true });
      const parked = await runtime.submit("ops", "old.log");
      await parked.result();
      const page = await fetch(url("api/runs"));
      expect(page.status).toBe(200);
      expect((await body(page)).runs.map((run: { runId: string }) => run.runId)).toEqual([
        parked.runId,
      ]);
      expect((await post(url(`api/runs/${parked.runId}/cancel`), {})).status).toBe(401);
    });

    it("records who cancels by the token's name, never the body's", async () => {
      const { runtime, url } = await setUp();
      const parked = await runtime.submit("ops", "old.log");
      await parked.result();
      const cancel = url(`api/runs/${parked.runId}/cancel`);

      const forged = await post(cancel, bearer("reviewer-2"), { by: "ops-lead" });
      expect(forged.status).toBe(400);
      expect((await post(cancel, bearer("reviewer-2"), {})).status).toBe(200);

      expect((await parked.result()).status).toBe("cancelled");
      const detail = await fetch(url(`api/runs/${parked.runId}`), { headers: bearer("ops-lead") });
      expect((await body(detail)).cancelledBy).toBe("reviewer-2");
    });

    it("records the decision by the token's name, never the body's, and answers 409 then 404", async () => {
      const { runtime, url } = await setUp();
      const parked = await runtime.submit("ops", "old.log");
      await parked.result();
      const approve = url(`api/runs/${parked.runId}/calls/call_1/approve`);

      const forged = await post(approve, bearer("reviewer-2"), { reason: "fine", by: "ops-lead" });
      expect(forged.status).toBe(400);
      expect((await body(forged)).error.code).toBe("body_invalid");

      const decided = await post(approve, bearer("reviewer-2"), { reason: "fine" });
      expect(decided.status).toBe(200);
      expect(await body(decided)).toEqual({ decided: "allow" });
      expect((await parked.result()).status).toBe("completed");
      const detail = await body(
        await fetch(url(`api/runs/${parked.runId}`), { headers: bearer("ops-lead") }),
      );
      expect(detail.decisions).toEqual([
        expect.objectContaining({
          toolCallId: "call_1",
          decision: "allow",
          by: "reviewer-2",
          reason: "fine",
        }),
      ]);

      const again = await post(
        url(`api/runs/${parked.runId}/calls/call_1/deny`),
        bearer("ops-lead"),
      );
      expect(again.status).toBe(409);
      expect((await body(again)).error.code).toBe("already_decided");
      expect(
        (await post(url("api/runs/nope/calls/call_1/approve"), bearer("ops-lead"))).status,
      ).toBe(404);
      expect(
        (await post(url(`api/runs/${parked.runId}/calls/nope/approve`), bearer("ops-lead"))).status,
      ).toBe(404);
      expect((await fetch(url("api/runs/nope"), { headers: bearer("ops-lead") })).status).toBe(404);
      expect(
        (await fetch(url("api/runs/nope/events"), { headers: bearer("ops-lead") })).status,
      ).toBe(404);
      const finished = await post(url(`api/runs/${parked.runId}/cancel`), bearer("ops-lead"));
      expect(finished.status).toBe(409);
      expect((await body(finished)).error.code).toBe("run_finished");
    });

    it("answers /api/overview from the counters and filters /api/runs by time range", async () => {
      const { runtime, url } = await setUp();
      const headers = bearer("ops-lead");
      const first = await runtime.submit("ops", "old.log");
      await first.result();
      const second = await runtime.submit("ops", "new.log");
      await second.result();
      const approved = await post(url(`api/runs/${first.runId}/calls/call_1/approve`), headers);
      expect(approved.status).toBe(200);
      const done = await first.result();
      expect(done.status).toBe("completed");
      const waiting = await runtime.get(second.runId);

      const overview = await fetch(url("api/overview?window=1h"), { headers });
      expect(overview.status).toBe(200);
      expect(await body(overview)).toEqual({
        counts: expect.objectContaining({ awaiting_approval: 1, completed: 1, running: 0 }),
        approvals: { waiting: 1, oldestSince: waiting.updatedAt },
        usage: {
          byAgent: { ops: { runs: 2, ...done.usage } },
        },
        failures: { byCode: {} },
      });
      // The default window is the day's, which holds these runs too.
      expect((await body(await fetch(url("api/overview"), { headers }))).counts.completed).toBe(1);
      const bad = await fetch(url("api/overview?window=2h"), { headers });
      expect(bad.status).toBe(400);
      expect((await body(bad)).error.code).toBe("query_invalid");

      const all = (await runtime.list()).runs;
      const newest = Math.max(...all.map((run) => run.createdAt));
      const ids = async (query: string) =>
        (
          (await body(await fetch(url(`api/runs?${query}`), { headers }))).runs as RunPage["runs"]
        ).map((run) => run.runId);
      const idsWhere = (keep: (createdAt: number) => boolean) =>
        all.filter((run) => keep(run.createdAt)).map((run) => run.runId);
      expect(await ids(`since=${newest}`)).toEqual(idsWhere((at) => at >= newest));
      expect(await ids(`until=${newest}`)).toEqual(idsWhere((at) => at < newest));
      expect(await ids(`since=${newest + 1}`)).toEqual([]);
      expect(await ids(`since=0&until=${newest + 1}&status=completed`)).toEqual([first.runId]);
      const backwards = await fetch(url(`api/runs?since=${newest}&until=0`), { headers });
      expect(backwards.status).toBe(400);
      // q: a run id prefix, or a session id.
      expect(await ids(`q=${first.runId.slice(0, 8)}`)).toEqual([first.runId]);
      expect(await ids(`q=${encodeURIComponent(waiting.sessionId)}`)).toEqual([second.runId]);
    });

    it("refuses bad query strings and bodies with 400 { error: { code, message } }", async () => {
      const { runtime, url } = await setUp();
      const parked = await runtime.submit("ops", "old.log");
      await parked.result();
      const headers = bearer("ops-lead");
      for (const path of [
        "api/runs?status=bogus",
        "api/runs?limit=0",
        "api/runs?limit=x",
        "api/runs?extra=1",
        "api/approvals?limit=9999",
        `api/runs/${parked.runId}/events?after=-1`,
      ]) {
        const response = await fetch(url(path), { headers });
        expect(response.status, path).toBe(400);
        expect((await body(response)).error).toEqual({
          code: "query_invalid",
          message: expect.stringContaining("Invalid query"),
        });
      }
      const badCursor = await fetch(url("api/runs?cursor=garbage"), { headers });
      expect(badCursor.status).toBe(400);
      expect((await body(badCursor)).error.code).toBe("config_invalid");
      const notJson = await fetch(url(`api/runs/${parked.runId}/calls/call_1/deny`), {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: "{",
      });
      expect(notJson.status).toBe(400);
      const longReason = await post(url(`api/runs/${parked.runId}/calls/call_1/deny`), headers, {
        reason: "x".repeat(3000),
      });
      expect(longReason.status).toBe(400);
      expect((await runtime.get(parked.runId)).decisions).toEqual([]);
    });

    it("lists runs with filters and a cursor, and the approvals inbox across runs; secret inputs never shown", async () => {
      const { runtime, url } = await setUp();
      const ops = await runtime.submit("ops", "old.log");
      const vault = await runtime.submit("vault", "log in");
      await Promise.all([ops.result(), vault.result()]);
      const headers = bearer("ops-lead");

      const first = (await (await fetch(url("api/runs?limit=1"), { headers })).json()) as RunPage;
      expect(first.runs).toHaveLength(1);
      const second = (await (
        await fetch(url(`api/runs?limit=1&cursor=${encodeURIComponent(first.nextCursor ?? "")}`), {
          headers,
        })
      ).json()) as RunPage;
      expect([first.runs[0]?.runId, second.runs[0]?.runId].sort()).toEqual(
        [ops.runId, vault.runId].sort(),
      );
      const byAgent = (await (
        await fetch(url("api/runs?agent=vault&status=awaiting_approval"), { headers })
      ).json()) as RunPage;
      expect(byAgent.runs.map((run: { runId: string }) => run.runId)).toEqual([vault.runId]);

      const inbox = await fetch(url("api/approvals"), { headers });
      const body = await inbox.text();
      expect(body).not.toContain("hunter2-secret");
      const { approvals, nextCursor } = JSON.parse(body);
      expect(nextCursor).toBeNull();
      const ordered = [...approvals].sort((a, b) => (a.agent < b.agent ? -1 : 1));
      expect(ordered).toEqual([
        {
          runId: ops.runId,
          agent: "ops",
          toolCallId: "call_1",
          name: "delete_file",
          input: { path: "old.log" },
          reason: "deleting needs a person",
          since: expect.any(Number),
          rootRunId: ops.runId, // a root run is its own tree's root
        },
        {
          runId: vault.runId,
          agent: "vault",
          toolCallId: "call_1",
          name: "login",
          input: { user: "ada", password: "[redacted]" },
          reason: "logging in",
          since: expect.any(Number),
          rootRunId: vault.runId,
        },
      ]);
      for (const path of [
        `api/runs/${vault.runId}`,
        `api/runs/${vault.runId}/events`,
        "api/runs",
      ]) {
        expect(await (await fetch(url(path), { headers })).text(), path).not.toContain(
          "hunter2-secret",
        );
      }
    });

    it("never shows an input field a tool marks secret (.meta), in any body or stream", async () => {
      const received: string[] = [];
      const { runtime, url } = await setUp({ agents: () => [markedSecretAgent(received)] });
      const headers = bearer("ops-lead");
      const changes = await fetch(url("api/stream"), {
        headers: { ...headers, accept: "text/event-stream" },
      });
      const stream = sseMessages(changes)[Symbol.asyncIterator]();
      expect((await stream.next()).value?.event).toBe("ready");
      const handle = await runtime.submit("keys", "unlock my laptop");
      expect((await handle.result()).status).toBe("awaiting_approval");

      const inbox = await body(await fetch(url("api/approvals"), { headers }));
      expect(inbox.approvals[0].input).toEqual({
        account: "ada",
        phrase: "[redacted]",
        device: { code: "[redacted]", label: "laptop" },
      });
      const live = await fetch(url(`api/runs/${handle.runId}/events`), {
        headers: { ...headers, accept: "text/event-stream" },
      });
      const streamed: SseMessage[] = [];
      const reading = (async () => {
        for await (const message of sseMessages(live)) {
          streamed.push(message);
          if (message.event === "end") return;
        }
      })();
      const approve = await post(url(`api/runs/${handle.runId}/calls/call_1/approve`), headers, {});
      expect(approve.status).toBe(200);
      await reading;
      expect((await handle.result()).status).toBe("completed");
      expect(received).toEqual([CANARY, CANARY]);

      const statusChanges: unknown[] = [];
      for (;;) {
        const next = await stream.next();
        statusChanges.push(next.value?.data);
        if ((next.value?.data as { status?: string } | undefined)?.status === "completed") break;
      }
      await stream.return?.(undefined);
      const detail = await fetch(url(`api/runs/${handle.runId}`), { headers });
      const detailText = await detail.text();
      expect(JSON.parse(detailText).toolCalls[0].input).toEqual({
        account: "ada",
        phrase: "[redacted]",
        device: { code: "[redacted]", label: "laptop" },
      });
      const shown = [
        detailText,
        await (await fetch(url(`api/runs/${handle.runId}/events`), { headers })).text(),
        await (await fetch(url("api/runs"), { headers })).text(),
        JSON.stringify(streamed),
        JSON.stringify(statusChanges),
      ];
      expect(streamed.some((message) => message.event === "run_event")).toBe(true);
      for (const text of shown) expect(text).not.toContain(CANARY);
    });

    it("events: JSON pages by position, and live SSE following a running run to its result", async () => {
      const { runtime, url } = await setUp();
      const parked = await runtime.submit("ops", "old.log");
      await parked.result();
      const headers = bearer("ops-lead");
      const page = await body(await fetch(url(`api/runs/${parked.runId}/events`), { headers }));
      expect(page.events.map((event: { type: string }) => event.type)).toContain(
        "approval_required",
      );
      expect(
        await (
          await fetch(url(`api/runs/${parked.runId}/events?after=${page.next}`), { headers })
        ).json(),
      ).toEqual({ events: [], next: page.next });

      const live = await fetch(url(`api/runs/${parked.runId}/events?after=${page.next}`), {
        headers: { ...headers, accept: "text/event-stream" },
      });
      expect(live.headers.get("content-type")).toContain("text/event-stream");
      const seen: SseMessage[] = [];
      const reading = (async () => {
        for await (const message of sseMessages(live)) {
          seen.push(message);
          if (message.event === "end") return;
        }
      })();
      await runtime.approve(parked.runId, "call_1", { by: "ops-lead" });
      await reading;
      const events = seen.filter((message) => message.event === "run_event");
      expect(events[0]?.id).toBe(String(page.next));
      expect(events.map((message) => (message.data as { type: string }).type)).toContain(
        "tool_end",
      );
      expect(events.at(-1)?.data).toEqual(expect.objectContaining({ type: "result" }));
    });

    it("GET /api/stream tells status changes of runs made by another runtime on the same store", async () => {
      const { url, other } = await setUp();
      const stream = await fetch(url("api/stream"), {
        headers: { ...bearer("ops-lead"), accept: "text/event-stream" },
      });
      const messages = sseMessages(stream)[Symbol.asyncIterator]();
      expect((await messages.next()).value?.event).toBe("ready");
      const remote = await other();
      const handle = await remote.submit("vault", "log in");
      const statuses: string[] = [];
      for (;;) {
        const { value } = await messages.next();
        const run = value?.data as {
          runId: string;
          status: string;
          pending: Array<{ input: unknown }>;
        };
        if (run.runId !== handle.runId) continue;
        statuses.push(run.status);
        if (run.status === "awaiting_approval") {
          expect(run.pending[0]?.input).toEqual({ user: "ada", password: "[redacted]" });
          break;
        }
      }
      expect(statuses[0]).toBe("queued");
      await messages.return?.(undefined);
    });

    it("a session cookie from POST /api/session lets GETs (EventSource) read, never write", async () => {
      const { runtime, url } = await setUp();
      const parked = await runtime.submit("ops", "old.log");
      await parked.result();
      const session = await post(url("api/session"), bearer("reviewer-2"));
      expect(session.status).toBe(200);
      const cookie = session.headers.get("set-cookie") ?? "";
      expect(cookie).toMatch(/HttpOnly/i);
      expect(cookie).toMatch(/SameSite=Strict/i);
      const jar = cookie.split(";")[0] ?? "";
      const whoami = await fetch(url("api/whoami"), { headers: { cookie: jar } });
      expect(await body(whoami)).toEqual({ name: "reviewer-2", readOpen: false });
      const write = await post(url(`api/runs/${parked.runId}/calls/call_1/approve`), {
        cookie: jar,
      });
      expect(write.status).toBe(401);
      const forged = `${jar.slice(0, -3)}abc`;
      expect((await fetch(url("api/runs"), { headers: { cookie: forged } })).status).toBe(401);
    });

    it("sets security headers on the page and the API", async () => {
      const { url } = await setUp();
      for (const path of ["", "api/runs"]) {
        const response = await fetch(url(path));
        expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
        expect(response.headers.get("x-content-type-options")).toBe("nosniff");
        expect(response.headers.get("referrer-policy")).toBe("no-referrer");
      }
      const page = await fetch(url(""));
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<script type="module" src="app.js">');
    });
  });
}
