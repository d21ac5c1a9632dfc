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

describe("harnessx against a frozen Redis", { timeout: 60_000 }, () => {
  it("runs ls, runs show and approve each exit 1 with backend_unavailable", async () => {
    const commands = [
      ["runs", "ls"],
      ["runs", "show", "run-1"],
      ["approve", "run-1", "call_1"],
    ];
    // Side by side: each waits out its connect timeout.
    const outcomes = await Promise.all(
      commands.map((args) => harnessx([...args, "--json", "--redis", url])),
    );
    for (const [index, outcome] of outcomes.entries()) {
      const command = commands[index]?.join(" ");
      expect({ command, code: outcome.code }).toEqual({ command, code: 1 });
      const report = JSON.parse(outcome.stdout) as { error: { code: string; message: string } };
      expect({ command, code: report.error.code }).toEqual({
        command,
        code: "backend_unavailable",
      });
      expect(report.error.message).toContain(url);
      expect(outcome.stderr).toMatch(/^harnessx: backend_unavailable: /);
      expect(outcome.stderr).not.toMatch(/^\s+at /m);
    }
  });
});
