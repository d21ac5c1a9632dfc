import { beforeAll, describe, expect, it } from "vitest";
import { AgentRuntime, createDashboard, memoryBackend, redisBackend } from "../../src/index.js";
import { body, describeDashboardApi } from "./dashboard-api-contract.js";
import { approvalAgent, silent } from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";

beforeAll(async () => {
  await requireRedis();
});

// A memory backend is one process's store: there, "another runtime" is the same runtime.
describeDashboardApi("memoryBackend()", {
  create: () => {
    return { backend: memoryBackend() };
  },
  cleanup: async () => {},
});

const prefixes: string[] = [];
describeDashboardApi("redisBackend()", {
  create: () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const make = () =>
      redisBackend({ url: redisUrl(), prefix, lockDurationMs: 2000, stalledIntervalMs: 1000 });
    return { backend: make(), shared: make };
  },
  cleanup: async () => {
    await Promise.all(prefixes.splice(0).map((prefix) => deletePrefix(prefix)));
  },
});

describe("the queue view", () => {
  it("shows bull-board over the Redis runtime's queues, names saying agent, tool and call", async () => {
    const prefix = uniquePrefix();
    const runtime = new AgentRuntime({
      agents: [approvalAgent().agent],
      backend: redisBackend({ url: redisUrl(), prefix }),
      logger: silent,
    });
    await runtime.start();
    const server = await createDashboard({
      runtime,
      tokens: { ops: "ops-token-0123456789" },
    }).listen({ port: 0 });
    try {
      const handle = await runtime.submit("ops", "old.log");
      await handle.result();
      await runtime.approve(handle.runId, "call_1", { by: "ops" });
      await handle.result();
      const url = (path: string) => new URL(path, server.url).toString();
      expect((await fetch(url("admin/queues"))).status).toBe(401);
      const session = await fetch(url("api/session"), {
        method: "POST",
        headers: { authorization: "Bearer ops-token-0123456789" },
      });
      const cookie = (session.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
      const board = await fetch(url("admin/queues"), { headers: { cookie } });
      expect(board.status).toBe(200);
      expect(await board.text()).toContain("harnessx queues");
      const queues = await body(
        await fetch(url("admin/queues/api/queues?activeQueue=&page=1&jobsPerPage=10"), {
          headers: { cookie },
        }),
      );
      const names = queues.queues.map((queue: { name: string }) => queue.name).sort();
      expect(names).toEqual([`${prefix} / harnessx-steps`, `${prefix} / harnessx-tools`]);
      expect(queues.queues.every((queue: { readOnlyMode: boolean }) => queue.readOnlyMode)).toBe(
        true,
      );
      const toolQueue = `${prefix} / harnessx-tools`;
      const active = await body(
        await fetch(
          url(
            `admin/queues/api/queues?activeQueue=${encodeURIComponent(toolQueue)}&status=completed&page=1&jobsPerPage=10`,
          ),
          { headers: { cookie } },
        ),
      );
      const job = active.queues.find((queue: { name: string }) => queue.name === toolQueue).jobs[0];
      expect(job.name).toBe("ops delete_file call_1");
      expect(job.data).toEqual({
        runId: handle.runId,
        iteration: 1,
        toolCallId: "call_1",
        agent: "ops",
        tool: "delete_file",
      });
      expect(job.returnValue).toEqual(
        expect.objectContaining({ runId: handle.runId, agent: "ops" }),
      );
    } finally {
      await server.close();
      await runtime.close();
      await deletePrefix(prefix);
    }
  });

  it("with the memory backend, says there are no queues", async () => {
    const runtime = new AgentRuntime({
      agents: [approvalAgent().agent],
      backend: memoryBackend(),
      logger: silent,
    });
    await runtime.start();
    const server = await createDashboard({ runtime, tokens: {}, readOpen: true }).listen({
      port: 0,
    });
    try {
      const response = await fetch(new URL("admin/queues", server.url));
      expect(response.status).toBe(404);
      expect((await body(response)).error.code).toBe("no_queues");
    } finally {
      await server.close();
      await runtime.close();
    }
  });
});
