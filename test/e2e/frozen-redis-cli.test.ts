// `harnessx` commands against a Redis that accepts connections but answers nothing (a
// redis-server frozen with SIGSTOP): each exits 1 with `backend_unavailable` (SPEC §8, §12), as
// against a Redis that refuses connections, never with the generic `backend_failed`.
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { harnessx } from "../support/cli.js";
import { freePort } from "../support/free-port.js";
import { launchRedisServer, stopProcess } from "../support/redis-server.js";

let server: ChildProcess | undefined;
let url = "";

beforeAll(async () => {
  const port = await freePort();
  url = `redis://127.0.0.1:${port}`;
  server = await launchRedisServer(port, ["--save", "", "--maxmemory-policy", "noeviction"]);
  server.kill("SIGSTOP");
});

afterAll(async () => {
  if (server === undefined) return;
  server.kill("SIGCONT");
  await stopProcess(server, "SIGKILL");
});

describe("harnessx against a frozen Redis", () => {
  it.each([
    { args: ["runs", "ls"] },
    { args: ["runs", "show", "run-1"] },
    { args: ["approve", "run-1", "call_1"] },
  ])("$args exits 1 with backend_unavailable", async ({ args }) => {
    const outcome = await harnessx([...args, "--json", "--redis", url]);
    expect(outcome.code).toBe(1);
    const report = JSON.parse(outcome.stdout) as { error: { code: string; message: string } };
    expect(report.error.code).toBe("backend_unavailable");
    expect(report.error.message).toContain(url);
    expect(outcome.stderr).toMatch(/^harnessx: backend_unavailable: /);
    expect(outcome.stderr).not.toMatch(/^\s+at /m);
  });
});
