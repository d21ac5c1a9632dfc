// The approval webhook survives a crash (SPEC §7.1): a worker killed (SIGKILL) while its
// delivery is in flight leaves the notice job to another worker, which delivers it; the
// receiver sees the same body and idempotency key again (at least once), and deduping by key
// it is told once. A real Redis, real worker processes, a real receiver on loopback.
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { AgentRuntime, redisBackend } from "../../src/index.js";
import { SLOW_TEST_MS } from "../fixtures/reliability-setup.js";
import { WorkerProcesses } from "../fixtures/worker-processes.js";
import { startWebhookReceiver } from "../support/webhook-receiver.js";
import { approvalAgent, silent } from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";

const SCRIPT = fileURLToPath(new URL("../fixtures/notice-worker.ts", import.meta.url));
const closers: Array<() => Promise<unknown>> = [];
const workers = new WorkerProcesses();

beforeAll(async () => {
  await requireRedis();
});
afterEach(async () => {
  await workers.killAll();
  for (const close of closers.splice(0).reverse()) await close();
  // The worker processes read these; the files run after this one in its worker must not.
  delete process.env.HX_WEBHOOK_URL;
  delete process.env.HX_WEBHOOK_SECRET;
  delete process.env.HX_HANG_NOTICE_QUEUE;
});

// Two worker processes start (tsx) in one test: as slow as the other crash tests.
describe("the approval webhook across a worker crash", { timeout: SLOW_TEST_MS }, () => {
  it("is delivered by another worker when the one delivering it is killed", async () => {
    const prefix = uniquePrefix();
    closers.push(() => deletePrefix(prefix));
    const hook = await startWebhookReceiver();
    closers.push(() => hook.stop());
    hook.answers.push("hang");
    process.env.HX_WEBHOOK_URL = hook.url;
    process.env.HX_WEBHOOK_SECRET = "crash-test-secret-0123456789";
    const options = { url: redisUrl(), prefix, script: SCRIPT };
    const first = await workers.start({ ...options, name: "first" });

    const client = new AgentRuntime({
      agents: [approvalAgent().agent],
      backend: redisBackend({ url: redisUrl(), prefix }),
      logger: silent,
    });
    await client.start({ workers: false });
    closers.push(() => client.close({ timeoutMs: 5000 }));
    const handle = await client.submit("ops", "a.log");
    expect((await handle.result()).status).toBe("awaiting_approval");

    // The first worker's delivery hangs: it dies holding the notice job.
    const [inFlight] = await hook.received(1);
    await first.kill();
    expect(first.running).toBe(false);
    await workers.start({ ...options, name: "second" });

    const [, again] = await hook.received(2);
    expect(again?.body).toBe(inFlight?.body);
    expect(again?.headers["idempotency-key"]).toBe(`${handle.runId}:call_1`);
    const deduped = new Set(hook.deliveries.map((each) => each.headers["idempotency-key"]));
    expect(deduped).toEqual(new Set([`${handle.runId}:call_1`]));

    // The run was never held up: the second worker finishes it once it is approved.
    await client.approve(handle.runId, "call_1", { by: "ops" });
    expect((await handle.result()).status).toBe("completed");
    expect(hook.deliveries).toHaveLength(2);
  });

  it("is queued again by another worker when the one that parked the run dies before queueing it", async () => {
    const prefix = uniquePrefix();
    closers.push(() => deletePrefix(prefix));
    const hook = await startWebhookReceiver();
    closers.push(() => hook.stop());
    process.env.HX_WEBHOOK_URL = hook.url;
    process.env.HX_WEBHOOK_SECRET = "crash-test-secret-0123456789";
    const options = { url: redisUrl(), prefix, script: SCRIPT };
    process.env.HX_HANG_NOTICE_QUEUE = "1";
    const first = await workers.start({ ...options, name: "first" });
    delete process.env.HX_HANG_NOTICE_QUEUE;

    const client = new AgentRuntime({
      agents: [approvalAgent().agent],
      backend: redisBackend({ url: redisUrl(), prefix }),
      logger: silent,
    });
    await client.start({ workers: false });
    closers.push(() => client.close({ timeoutMs: 5000 }));
    const handle = await client.submit("ops", "a.log");
    // The park is saved; the first worker's step hangs before its notice is queued.
    expect((await handle.result()).status).toBe("awaiting_approval");
    await first.kill();
    expect(hook.deliveries).toHaveLength(0);
    await workers.start({ ...options, name: "second" });

    // The second worker takes the stalled step over, finds the run parked, queues the notice.
    const [delivered] = await hook.received(1);
    expect(delivered?.headers["idempotency-key"]).toBe(`${handle.runId}:call_1`);
    expect(JSON.parse(delivered?.body ?? "{}")).toMatchObject({
      runId: handle.runId,
      toolCallId: "call_1",
      rootRunId: handle.runId,
    });
    await client.approve(handle.runId, "call_1", { by: "ops" });
    expect((await handle.result()).status).toBe("completed");
    expect(hook.deliveries).toHaveLength(1);
  });
});
