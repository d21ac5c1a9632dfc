import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentRuntime, redisBackend } from "../../src/index.js";
import { demoSupportAgent } from "../../src/testing.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "../integration/redis.js";
import { harnessx } from "../support/cli.js";

// `harnessx dashboard`, `harnessx demo --dashboard` and `harnessx doctor` from the built package.

const root = new URL("../../", import.meta.url);
const TOKEN = "ops-lead-token-0123456789";

let folder = "";
let tokenFile = "";

beforeAll(async () => {
  await requireRedis();
  folder = await mkdtemp(join(tmpdir(), "harnessx-dashboard-cli-"));
  tokenFile = join(folder, "tokens");
  await writeFile(tokenFile, `# who decides\nops-lead=${TOKEN}\n`);
});

afterAll(async () => {
  if (folder !== "") await rm(folder, { recursive: true, force: true });
});

/** Starts `harnessx …args` and waits for its first stdout line (the --json document). */
async function serve(
  args: readonly string[],
): Promise<{ child: ChildProcessWithoutNullStreams; first: Record<string, unknown> }> {
  const child = spawn(process.execPath, ["dist/cli/main.js", ...args], { cwd: root });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`exited ${code} before serving: ${stderr}`)));
  });
  return { child, first: JSON.parse(first) as Record<string, unknown> };
}

async function stop(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  return exited;
}

/** The status of `GET /api/runs` on 127.0.0.1:`port` sent with the Host header `host`. */
function statusWithHost(port: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: "127.0.0.1", port, path: "/api/runs", headers: { host } },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    outgoing.on("error", reject);
    outgoing.end();
  });
}

const api = (url: string, path: string, init: RequestInit = {}) =>
  fetch(new URL(path, url), {
    ...init,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
  });

describe("harnessx demo --dashboard", { timeout: 30_000 }, () => {
  it("serves the embedded demo with runs waiting for a person, decided as the token's name", async () => {
    const { child, first } = await serve([
      "demo",
      "--dashboard",
      "--port",
      "0",
      "--token-file",
      tokenFile,
      "--json",
    ]);
    try {
      expect(first).toMatchObject({ tokens: ["ops-lead"], runs: 12, waiting: 3 });
      const url = String(first.url);
      expect((await fetch(new URL("/api/approvals", url))).status).toBe(401);
      const inbox = (await (await api(url, "/api/approvals")).json()) as {
        approvals: Array<{ runId: string; toolCallId: string; name: string }>;
      };
      expect(inbox.approvals).toHaveLength(3);
      const [call] = inbox.approvals;
      if (call === undefined) throw new Error("no approval");
      const decided = await api(url, `/api/runs/${call.runId}/calls/${call.toolCallId}/approve`, {
        method: "POST",
        body: JSON.stringify({ reason: "checked the order" }),
      });
      expect(decided.status).toBe(200);
      type Detail = {
        status: string;
        decisions: Array<{ by: string; reason: string }>;
        modelCalls: Array<{ iteration: number; usage: { inputTokens: number } }>;
        checkpoints: Array<{ phase: string }>;
        toolCalls: Array<{ toolCallId: string; raw: unknown; result: unknown }>;
      };
      const detail = async () =>
        (await (await api(url, `/api/runs/${call.runId}`)).json()) as Detail;
      await expect.poll(async () => (await detail()).status).toBe("completed");
      const run = await detail();
      expect(run.decisions).toEqual([
        expect.objectContaining({ by: "ops-lead", reason: "checked the order" }),
      ]);
      // The demo's runs show the timeline: model calls with tokens, saves, raw and processed results.
      expect(run.modelCalls.map((each) => each.iteration)).toEqual([1, 2]);
      expect(run.modelCalls[0]?.usage.inputTokens).toBeGreaterThan(0);
      expect(run.checkpoints.map((each) => each.phase)).toContain("awaitingApproval");
      expect(run.checkpoints.at(-1)?.phase).toBe("done");
      expect(run.toolCalls).toEqual([
        expect.objectContaining({
          toolCallId: call.toolCallId,
          raw: expect.objectContaining({ isError: false }),
          result: expect.objectContaining({ isError: false }),
        }),
      ]);
    } finally {
      expect(await stop(child)).toBe(0);
    }
  });
});

describe("harnessx dashboard --redis", { timeout: 30_000 }, () => {
  let prefix = "";
  let runtime: AgentRuntime;

  beforeAll(async () => {
    prefix = uniquePrefix();
    runtime = new AgentRuntime({
      agents: [demoSupportAgent({ logger: pino({ level: "silent" }) })],
      backend: redisBackend({ url: redisUrl(), prefix }),
      logger: pino({ level: "silent" }),
    });
    await runtime.start();
  });

  afterAll(async () => {
    await runtime?.close();
    if (prefix !== "") await deletePrefix(prefix);
  });

  it("lists the runs another process stored, and refuses a short token file", async () => {
    const handle = await runtime.submit("support", "Refund order 7");
    expect((await handle.result()).status).toBe("awaiting_approval");
    const { child, first } = await serve([
      "dashboard",
      "--redis",
      redisUrl(),
      "--prefix",
      prefix,
      "--port",
      "0",
      "--token-file",
      tokenFile,
      "--allowed-host",
      "dash.example.test",
      "--json",
    ]);
    try {
      // The names it answers: its address, localhost and --allowed-host; any other is refused.
      const port = new URL(String(first.url)).port;
      expect(await statusWithHost(port, `dash.example.test:${port}`)).toBe(401);
      expect(await statusWithHost(port, `localhost:${port}`)).toBe(401);
      expect(await statusWithHost(port, `attacker.example:${port}`)).toBe(421);
      const page = (await (await api(String(first.url), "/api/runs")).json()) as {
        runs: Array<{ runId: string; status: string }>;
      };
      expect(page.runs).toEqual([
        expect.objectContaining({ runId: handle.runId, status: "awaiting_approval" }),
      ]);
    } finally {
      expect(await stop(child)).toBe(0);
    }

    const short = join(folder, "short");
    await writeFile(short, "ops=abc\n");
    const refused = await harnessx(["dashboard", "--redis", redisUrl(), "--token-file", short]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("shorter than 16 characters");

    // A file holding a bare token: refused as usage, the token never printed.
    const bare = join(folder, "bare");
    const secret = "bare-token-never-printed-58211";
    await writeFile(bare, `${secret}\n`);
    const unnamed = await harnessx(["dashboard", "--redis", redisUrl(), "--token-file", bare]);
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toContain("line 1 of the token file is not name=token");
    expect(`${unnamed.stdout}${unnamed.stderr}`).not.toContain(secret);
  });
});

describe("harnessx doctor", { timeout: 30_000 }, () => {
  it("reports on the test Redis as JSON, and needs a Redis to look at", async () => {
    const checked = await harnessx([
      "doctor",
      "--redis",
      redisUrl(),
      "--prefix",
      uniquePrefix(),
      "--json",
    ]);
    const report = JSON.parse(checked.stdout) as { healthy: boolean; evictionPolicy: string[] };
    expect(report.evictionPolicy).toContain("noeviction");
    expect(checked.code).toBe(report.healthy ? 0 : 1);

    const { REDIS_URL: _url, ...withoutRedis } = process.env;
    const usage = await harnessx(["doctor"], withoutRedis);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("doctor needs --redis");
  });
});
