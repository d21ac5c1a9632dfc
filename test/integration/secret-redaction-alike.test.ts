// SPEC §8: secret fields, marked in the schema or named like a secret, are redacted the same way
// everywhere. A durable run on real Redis of a tool with `password` (named), `otp` (marked) and
// `login.apiKey` (named, nested), through a person's approval, at the most verbose log level:
// each secret carries a canary, scanned in every Redis key, log line, span, the recording (its
// `rec:` key, `recording()`, `exportJsonl`), the dashboard's API and the audit.
import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  AgentRuntime,
  createDashboard,
  FlightRecorder,
  PermissionManager,
  redisBackend,
  tool,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { useTracing } from "../support/tracing.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";
import { valuesUnder } from "./redis-values.js";

const tracing = useTracing();
const closers: Array<() => Promise<unknown>> = [];
beforeAll(async () => {
  await requireRedis();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function capturedLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: pino({ level: "trace" }, sink), lines };
}

describe("one redaction rule for marked and named secrets", () => {
  it("redacts a field named like a secret wherever a marked one is redacted", async () => {
    const prefix = uniquePrefix();
    closers.push(() => deletePrefix(prefix));
    const canaries = {
      password: `pw-${randomUUID()}`,
      otp: `otp-${randomUUID()}`,
      apiKey: `key-${randomUUID()}`,
    };
    const { logger, lines } = capturedLogger();
    const handled = { count: 0 };
    const login = tool({
      name: "login",
      description: "Logs in.",
      input: z.object({
        user: z.string(),
        password: z.string(),
        otp: z.string().meta({ secret: true }),
        login: z.object({ apiKey: z.string() }),
      }),
      handler: async (input) => {
        handled.count += 1;
        // The handler gets every value in clear.
        return input.password === canaries.password &&
          input.otp === canaries.otp &&
          input.login.apiKey === canaries.apiKey
          ? "logged in"
          : "refused";
      },
    });
    const recorder = new FlightRecorder();
    const agent = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([
          {
            id: "c1",
            name: "login",
            input: {
              user: "ada",
              password: canaries.password,
              otp: canaries.otp,
              login: { apiKey: canaries.apiKey },
            },
          },
        ]),
        textResponse("done"),
      ]),
      tools: [login],
      permissions: new PermissionManager({
        default: "allow",
        rules: [{ tool: "login", decision: "ask", reason: "logging in" }],
      }),
      config: { name: "ops" },
      logger,
      recorder,
    });
    const runtime = new AgentRuntime({
      agents: [agent],
      backend: redisBackend({ url: redisUrl(), prefix }),
      logger,
    });
    await runtime.start();
    closers.push(() => runtime.close({ timeoutMs: 5000 }));
    const dashboard = await createDashboard({
      runtime,
      tokens: { "ops-lead": "token-of-the-lead" },
      readOpen: true,
    }).listen({ port: 0 });
    closers.push(() => dashboard.close());
    const api = async (path: string) => (await fetch(`${dashboard.url}${path}`)).text();

    const handle = await runtime.submit("ops", "log in");
    expect((await handle.result()).status).toBe("awaiting_approval");
    const shown = [
      JSON.stringify(await runtime.list()),
      await api("/api/approvals"),
      await api(`/api/runs/${handle.runId}`),
    ];
    await runtime.approve(handle.runId, "c1", { by: "ops-lead" });
    const result = await handle.result();
    expect(result.status).toBe("completed");
    expect(handled.count).toBe(1);
    shown.push(
      await api(`/api/runs/${handle.runId}`),
      await api(`/api/runs/${handle.runId}/events`),
    );

    const secrets = Object.values(canaries);
    const holdsAny = (text: string) => secrets.filter((canary) => text.includes(canary));

    // The recording: each field redacted alike, from Redis and from the recorder.
    const recording = JSON.stringify(await runtime.recording(handle.runId));
    for (const field of ["password", "otp", "apiKey"]) {
      expect(recording).toContain(`"${field}":"[redacted]"`);
    }
    expect(holdsAny(recording)).toEqual([]);
    expect(holdsAny(await recorder.exportJsonl(handle.runId))).toEqual([]);

    // Every Redis key: no recording key holds a secret, and every other key holds all three
    // or none (the run's conversation is kept as the model sent it, SPEC §8 `get`).
    const stored = await valuesUnder(prefix);
    const recordingKeys = [...stored.keys()].filter((key) => key.includes(":rec:"));
    expect(recordingKeys.length).toBeGreaterThan(0);
    for (const key of recordingKeys) expect(holdsAny(stored.get(key) ?? "")).toEqual([]);
    for (const [key, value] of stored) {
      expect({ key, secrets: holdsAny(value).length }).toEqual({
        key,
        secrets: holdsAny(value).length === 0 ? 0 : secrets.length,
      });
    }

    // The dashboard, the summaries and the audit.
    for (const text of shown) expect(holdsAny(text)).toEqual([]);
    expect(shown.join("")).toContain('"password":"[redacted]"');
    const detail = await runtime.get(handle.runId);
    expect(holdsAny(JSON.stringify(detail.decisions))).toEqual([]);
    expect(detail.decisions).toMatchObject([{ toolCallId: "c1", by: "ops-lead" }]);

    // Logs and spans.
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(holdsAny(line)).toEqual([]);
    for (const span of tracing.spans()) {
      expect(holdsAny(JSON.stringify(span.attributes))).toEqual([]);
      expect(holdsAny(JSON.stringify(span.events))).toEqual([]);
    }
  });

  it("redacts a named field in a direct run's recording too, in any letter case and nested", async () => {
    const canary = `token-${randomUUID()}`;
    const seen: string[] = [];
    const fetchTool = tool({
      name: "fetch_page",
      description: "Fetches a page.",
      input: z.object({ url: z.string(), auth: z.object({ Token: z.string() }) }),
      handler: async ({ auth }) => {
        seen.push(auth.Token);
        return "page";
      },
    });
    const recorder = new FlightRecorder();
    const agent = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([
          { name: "fetch_page", input: { url: "https://example.com", auth: { Token: canary } } },
        ]),
        textResponse("fetched"),
      ]),
      tools: [fetchTool],
      recorder,
      logger: pino({ level: "silent" }),
    });
    const result = await agent.run("Fetch it");
    expect(result.status).toBe("completed");
    // The handler got the value; the recording (any letter case, nested) did not.
    expect(seen).toEqual([canary]);
    const exported = await recorder.exportJsonl(result.runId);
    expect(exported).toContain('"Token":"[redacted]"');
    expect(exported).not.toContain(canary);
  });
});
