// The Host check (SPEC §12.1): a request naming a host the dashboard does not answer for is
// refused 421 before anything is read, readOpen or not; the listening address, localhost and
// allowedHosts are answered.
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { AgentRuntime, createDashboard, memoryBackend } from "../../src/index.js";
import { approvalAgent, silent } from "./fixtures.js";

const TOKEN = "hosts-test-token-0123456789";
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function serve(options: { readOpen?: boolean; allowedHosts?: string[] } = {}) {
  const runtime = new AgentRuntime({
    agents: [approvalAgent().agent],
    backend: memoryBackend(),
    logger: silent,
  });
  await runtime.start();
  closers.push(() => runtime.close());
  const handle = await runtime.submit("ops", "secret-plan.txt");
  await handle.result();
  const server = await createDashboard({ runtime, tokens: { ops: TOKEN }, ...options }).listen({
    port: 0,
  });
  closers.push(() => server.close());
  return new URL(server.url);
}

/** GET `path` on `url`'s address with the Host header `host`, none when null (fetch may not set Host). */
function get(
  url: URL,
  path: string,
  host: string | null,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        setHost: false,
        headers: host === null ? {} : { host },
      },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          body += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    outgoing.on("error", reject);
    outgoing.end();
  });
}

describe("the dashboard's Host check", () => {
  it("refuses a foreign Host with 421 and reads nothing for it, even with readOpen", async () => {
    const url = await serve({ readOpen: true });
    for (const path of ["/api/approvals", "/api/runs", "/", "/config.json"]) {
      const refused = await get(url, path, `attacker.example:${url.port}`);
      expect(refused.status).toBe(421);
      expect(JSON.parse(refused.body).error.code).toBe("host_not_allowed");
      expect(refused.body).not.toContain("secret-plan");
    }
    const open = await get(url, "/api/approvals", `127.0.0.1:${url.port}`);
    expect(open.status).toBe(200);
    expect(open.body).toContain("secret-plan");
    expect((await get(url, "/api/approvals", `localhost:${url.port}`)).status).toBe(200);
    expect((await get(url, "/api/approvals", "LOCALHOST")).status).toBe(200);
    // A name that only starts like an allowed one is another name.
    expect((await get(url, "/api/approvals", "localhost.attacker.example")).status).toBe(421);
    // Without a Host at all, Node's server refuses the HTTP/1.1 request before the dashboard.
    expect((await get(url, "/api/approvals", null)).status).toBe(400);
  });

  it("answers the names in allowedHosts, with or without a port as given", async () => {
    const url = await serve({
      readOpen: true,
      allowedHosts: ["dash.example.com", "ops.test:8443"],
    });
    expect((await get(url, "/api/runs", "dash.example.com")).status).toBe(200);
    expect((await get(url, "/api/runs", "Dash.Example.com:443")).status).toBe(200);
    expect((await get(url, "/api/runs", "ops.test:8443")).status).toBe(200);
    expect((await get(url, "/api/runs", "ops.test:9000")).status).toBe(421);
    expect((await get(url, "/api/runs", "other.example.com")).status).toBe(421);
  });

  it("refuses a foreign Host before asking for a token", async () => {
    const url = await serve();
    expect((await get(url, "/api/runs", `attacker.example:${url.port}`)).status).toBe(421);
    expect((await get(url, "/api/runs", `127.0.0.1:${url.port}`)).status).toBe(401);
  });

  it("refuses allowedHosts that are not host names", () => {
    const runtime = new AgentRuntime({
      agents: [approvalAgent().agent],
      backend: memoryBackend(),
      logger: silent,
    });
    expect(() =>
      createDashboard({ runtime, tokens: {}, allowedHosts: ["https://dash.example.com/"] }),
    ).toThrow(/allowedHosts\.0/);
  });
});
