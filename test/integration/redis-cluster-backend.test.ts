// redisBackend() on a Redis Cluster: the whole backend contract, and what a cluster asks of the
// options and of the keys (every key of the backend in the one slot of the prefix's hash tag).
import { Cluster } from "ioredis";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunBackend } from "../../src/backend.js";
import { AgentRuntime, BackendError, ConfigError, redisBackend } from "../../src/index.js";
import { freePort } from "../support/free-port.js";
import { startRedisCluster } from "../support/redis-cluster.js";
import { describeBackendContract } from "./backend-contract.js";
import { approvalAgent, Runtimes, rejection, silent } from "./fixtures.js";
import {
  clusterClient,
  clusterKeys,
  clusterNodes,
  deleteClusterPrefix,
  uniqueClusterPrefix,
} from "./redis-cluster.js";

const prefixes: string[] = [];

function freshPrefix(): string {
  const prefix = uniqueClusterPrefix();
  prefixes.push(prefix);
  return prefix;
}

const backendOn = (prefix: string): RunBackend =>
  redisBackend({
    cluster: clusterNodes(),
    prefix,
    lockDurationMs: 2000,
    stalledIntervalMs: 1000,
  });

const cleanup = async (): Promise<void> => {
  await Promise.all(prefixes.splice(0).map((prefix) => deleteClusterPrefix(prefix)));
};

beforeAll(async () => {
  const client = await clusterClient();
  try {
    expect(await client.cluster("INFO")).toContain("cluster_state:ok");
  } finally {
    client.disconnect();
  }
});

describeBackendContract("redisBackend() on a Redis Cluster", {
  create: () => backendOn(freshPrefix()),
  cleanup,
  publishesInOrder: false,
  storedKeys: async () => {
    const client = await clusterClient();
    try {
      return await clusterKeys(client, prefixes.at(-1) ?? "");
    } finally {
      client.disconnect();
    }
  },
  editStored: async (runId, field, edit) => {
    const client = await clusterClient();
    try {
      const key = `${prefixes.at(-1) ?? ""}:run:${runId}`;
      await client.hset(key, field, edit((await client.hget(key, field)) ?? ""));
    } finally {
      client.disconnect();
    }
  },
});

describe("redisBackend() options for a Redis Cluster", () => {
  it("refuses a prefix without a hash tag, saying why", () => {
    for (const prefix of ["hx", "hx{}", "hx}{"]) {
      const error = (() => {
        try {
          redisBackend({ cluster: clusterNodes(), prefix });
        } catch (thrown) {
          return thrown;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/prefix.*hash tag.*one hash slot/);
    }
  });

  it("refuses a prefix without a hash tag with a Cluster connection too", () => {
    const connection = new Cluster(clusterNodes(), { lazyConnect: true });
    expect(() => redisBackend({ connection, prefix: "hx" })).toThrow(ConfigError);
    expect(redisBackend({ connection, prefix: "{hx}" }).kind).toBe("redis");
  });

  it("refuses url and cluster together", () => {
    expect(() =>
      redisBackend({ url: "redis://127.0.0.1:6379", cluster: clusterNodes(), prefix: "{hx}" }),
    ).toThrow(/cluster: give either url or cluster, not both/);
  });

  it("accepts a prefix with a hash tag anywhere in it", () => {
    expect(redisBackend({ cluster: clusterNodes(), prefix: "{tenant-7}-hx" }).kind).toBe("redis");
  });
});

describe("redisBackend() on a Redis Cluster, keys and servers", () => {
  const runtimes = new Runtimes();
  afterEach(async () => {
    await runtimes.closeAll();
    await cleanup();
  });

  it("keeps every key of a run, and BullMQ's, in the hash slot of the prefix's tag", async () => {
    const prefix = freshPrefix();
    const { agent } = approvalAgent();
    const runtime = await runtimes.start([agent], backendOn(prefix));
    const handle = await runtime.submit("ops", "old.log");
    expect((await handle.result()).status).toBe("awaiting_approval");
    await runtime.approve(handle.runId, "call_1", { by: "ops-lead" });
    expect((await handle.result()).status).toBe("completed");

    const client = await clusterClient();
    try {
      const keys = await clusterKeys(client, prefix);
      const kinds = new Set(keys.map((key) => key.split(":")[1]));
      expect([...kinds]).toEqual(
        expect.arrayContaining([
          "run",
          "idx",
          "msgs",
          "ckpt",
          "events",
          "audit",
          "harnessx-steps",
          "harnessx-tools",
        ]),
      );
      const slot = await client.cluster("KEYSLOT", prefix.slice(1, prefix.indexOf("}")));
      const slots = await Promise.all(keys.map((key) => client.cluster("KEYSLOT", key)));
      expect(new Set(slots)).toEqual(new Set([slot]));
    } finally {
      client.disconnect();
    }
  });

  it('puts its keys under "{hx}" when no prefix is given on a cluster', async () => {
    prefixes.push("{hx}");
    const { agent } = approvalAgent();
    const runtime = await runtimes.start([agent], redisBackend({ cluster: clusterNodes() }));
    const handle = await runtime.submit("ops", "old.log");
    expect((await handle.result()).status).toBe("awaiting_approval");

    const client = await clusterClient();
    try {
      expect(await clusterKeys(client, "{hx}")).toContain(`{hx}:run:${handle.runId}`);
    } finally {
      client.disconnect();
    }
  });

  it("runs on an ioredis Cluster the caller gives, and leaves it open", async () => {
    const connection = new Cluster(clusterNodes(), {
      lazyConnect: true,
      redisOptions: { maxRetriesPerRequest: null },
    });
    try {
      const { agent, deleted } = approvalAgent();
      const runtime = await runtimes.start(
        [agent],
        redisBackend({ connection, prefix: freshPrefix() }),
      );
      const handle = await runtime.submit("ops", "old.log");
      expect((await handle.result()).status).toBe("awaiting_approval");
      await runtime.approve(handle.runId, "call_1", { by: "ops-lead" });
      expect((await handle.result()).status).toBe("completed");
      expect(deleted).toEqual(["old.log"]);
      await runtimes.closeAll();

      expect(await connection.ping()).toBe("PONG");
    } finally {
      connection.disconnect();
    }
  });

  it("fails to start with a clear error when no startup node answers", async () => {
    const port = await freePort();
    const runtime = new AgentRuntime({
      agents: [approvalAgent().agent],
      backend: redisBackend({
        cluster: [{ host: "127.0.0.1", port }],
        prefix: freshPrefix(),
        connectTimeoutMs: 1000,
      }),
      logger: silent,
    });

    const error = await rejection(runtime.start());
    await runtime.close();

    expect(error).toBeInstanceOf(BackendError);
    expect((error as Error).message).toContain(`Cannot reach Redis Cluster at 127.0.0.1:${port}`);
  });

  it("refuses to start when a master's maxmemory-policy is not noeviction, naming it", async () => {
    // A cluster of its own: the shared one's policy changed, the runtimes that other test files
    // start on it meanwhile (the workers run files side by side) would be refused as well.
    const own = await startRedisCluster();
    const nodes = own.nodes.split(",").map((address) => {
      const [host, port] = address.split(":");
      return { host: host ?? "", port: Number(port) };
    });
    const client = new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: 1 } });
    try {
      await client.cluster("INFO");
      const master = client.nodes("master").at(-1);
      if (master === undefined) throw new Error("the test cluster has no master");
      await master.config("SET", "maxmemory-policy", "allkeys-lru");
      const runtime = new AgentRuntime({
        agents: [approvalAgent().agent],
        backend: redisBackend({ cluster: nodes, prefix: uniqueClusterPrefix() }),
        logger: silent,
      });
      const error = await rejection(runtime.start());
      await runtime.close();

      expect(error).toBeInstanceOf(BackendError);
      expect((error as Error).message).toContain(
        `Redis Cluster node ${master.options.host}:${master.options.port} has maxmemory-policy 'allkeys-lru'`,
      );
    } finally {
      client.disconnect();
      await own.stop();
    }
  });
});
