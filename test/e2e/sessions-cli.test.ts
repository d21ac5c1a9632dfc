import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentRuntime, redisBackend } from "../../src/index.js";
import { demoSupportAgent } from "../../src/testing.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "../integration/redis.js";
import { harnessx } from "../support/cli.js";
import { silent } from "../support/silent.js";

// `harnessx sessions delete ID` from the built package, against sessions a runtime in this
// process stores in a real Redis.

let prefix = "";
let runtime: AgentRuntime;
/** The Redis flags of every command. */
let target: string[] = [];
const state = (sessionId: string) => ({
  agent: "support",
  extension: "memory",
  key: "notes",
  sessionId,
});

/** Two finished runs and one saved state value in `sessionId`; returns the runs' ids. */
async function fillSession(sessionId: string): Promise<string[]> {
  const runIds: string[] = [];
  for (const order of [1, 2]) {
    const handle = await runtime.submit("support", `Where is order ${order}?`, { sessionId });
    expect((await handle.result()).status).toBe("completed");
    runIds.push(handle.runId);
  }
  await runtime.backend.extensionState.set(state(sessionId), { note: `${sessionId} canary` });
  return runIds;
}

beforeAll(async () => {
  await requireRedis();
  prefix = uniquePrefix();
  target = ["--redis", redisUrl(), "--prefix", prefix];
  runtime = new AgentRuntime({
    agents: [demoSupportAgent({ logger: silent })],
    backend: redisBackend({ url: redisUrl(), prefix }),
    logger: silent,
  });
  await runtime.start();
});

afterAll(async () => {
  await runtime?.close();
  if (prefix !== "") await deletePrefix(prefix);
});

describe("harnessx sessions delete", () => {
  it("deletes a session's finished runs and saved state, and says how many (--json)", async () => {
    const runIds = await fillSession("erase-json");
    await fillSession("kept");

    const outcome = await harnessx(["sessions", "delete", "erase-json", "--json", ...target]);
    expect(outcome).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(outcome.stdout)).toEqual({ sessionId: "erase-json", runs: 2, states: 1 });
    expect((await runtime.list({ sessionId: "erase-json" })).runs).toEqual([]);
    for (const runId of runIds) {
      expect((await runtime.list({ limit: 500 })).runs.map((run) => run.runId)).not.toContain(
        runId,
      );
    }
    expect(await runtime.backend.extensionState.get(state("erase-json"))).toBeUndefined();
    expect((await runtime.list({ sessionId: "kept" })).runs).toHaveLength(2);
    expect(await runtime.backend.extensionState.get(state("kept"))).toEqual({
      note: "kept canary",
    });
  });

  it("prints what it deleted as text; a session with nothing left deletes nothing, exit 0", async () => {
    await fillSession("erase-text");
    const outcome = await harnessx(["sessions", "delete", "erase-text", ...target]);
    expect(outcome).toEqual({
      code: 0,
      stdout: "deleted session erase-text: 2 finished run(s), 1 saved state value(s)\n",
      stderr: "",
    });
    const again = await harnessx(["sessions", "delete", "erase-text", "--json", ...target]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ sessionId: "erase-text", runs: 0, states: 0 });
  });

  it("exits 2 without a session id and 1 for an empty one", async () => {
    const missing = await harnessx(["sessions", "delete", ...target]);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toContain("missing required argument 'id'");

    const empty = await harnessx(["sessions", "delete", "", ...target]);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toBe(
      "harnessx: config_invalid: deleteSession() needs a non-empty string id.\n",
    );
  });
});
