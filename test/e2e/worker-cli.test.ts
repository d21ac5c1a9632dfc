import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { WORKER_SEMI_SPACE_MB } from "../../src/cli/young-generation.js";
import { AgentRuntime, redisBackend, verifyApprovalSignature } from "../../src/index.js";
import { demoSupportAgent } from "../../src/testing.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "../integration/redis.js";
import { harnessx } from "../support/cli.js";
import { silent } from "../support/silent.js";
import { startWebhookReceiver } from "../support/webhook-receiver.js";

const root = new URL("../../", import.meta.url);

/**
 * Starts `harnessx worker --json` from the built package; resolves once it logs (on stderr) that
 * it started. `stdout()` is what it printed on stdout so far.
 */
async function startWorker(
  prefix: string,
  env: NodeJS.ProcessEnv = process.env,
  extra: readonly string[] = [],
): Promise<{ child: ChildProcess; stdout: () => string; stderr: () => string; started: Started }> {
  const child = spawn(
    process.execPath,
    ["dist/cli/main.js", "worker", "--agents", "examples/distributed/agents.mjs"].concat([
      "--redis",
      redisUrl(),
      "--prefix",
      prefix,
      "--concurrency",
      "4",
      "--json",
      ...extra,
    ]),
    { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let log = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const started = await new Promise<Started>((resolve, reject) => {
    child.once("exit", (code) =>
      reject(new Error(`worker exited (${String(code)}):\n${log}\n${stdout}`)),
    );
    // Its log is on stderr: stdout is for --json.
    child.stderr?.on("data", (chunk: Buffer) => {
      log += chunk.toString();
      const line = log.split("\n").find((each) => each.includes('"msg":"worker started"'));
      if (line !== undefined) resolve(JSON.parse(line) as Started);
    });
  });
  return { child, stdout: () => stdout, stderr: () => log, started };
}

/** The worker's "worker started" log line. */
interface Started {
  pid: number;
  semiSpaceMb: number | null;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("harnessx worker (a separate process)", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("advances runs submitted by another process, then stops cleanly on SIGTERM", async () => {
    await requireRedis();
    const prefix = uniquePrefix();
    cleanups.push(() => deletePrefix(prefix));
    const { child: worker, stdout, started } = await startWorker(prefix);
    cleanups.push(() => stop(worker));

    const submitter = new AgentRuntime({
      agents: [demoSupportAgent({ logger: silent })],
      backend: redisBackend({ url: redisUrl(), prefix }),
      logger: silent,
    });
    await submitter.start({ workers: false });
    cleanups.push(() => submitter.close());

    const handles = await Promise.all(
      [1, 2, 3].map((index) => submitter.submit("support", `Where is order ${index}?`)),
    );
    const results = await Promise.all(handles.map((handle) => handle.result()));
    expect(results.map((result) => result.output)).toEqual([
      "Done: Order 1: shipped yesterday.",
      "Done: Order 2: shipped yesterday.",
      "Done: Order 3: shipped yesterday.",
    ]);

    const refund = await submitter.submit("support", "Refund order 7");
    const parked = await refund.result();
    expect(parked.status).toBe("awaiting_approval");
    await submitter.approve(refund.runId, parked.pending[0]?.toolCallId ?? "", { by: "test" });
    expect((await refund.result()).output).toBe("Done: Refunded order 7.");

    // It runs in a process of its own with the worker's young generation.
    expect(started.semiSpaceMb).toBe(WORKER_SEMI_SPACE_MB);
    expect(started.pid).not.toBe(worker.pid);

    // "close": its stdout is read to the end.
    const exited = once(worker, "close");
    worker.kill("SIGTERM");
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    // Nothing but its --json report on stdout: the log went to stderr.
    expect(JSON.parse(stdout())).toEqual({ agents: ["support"], signal: "SIGTERM" });
  });

  it("POSTs each call that starts waiting to --approval-webhook, signed", async () => {
    await requireRedis();
    const prefix = uniquePrefix();
    cleanups.push(() => deletePrefix(prefix));
    const hook = await startWebhookReceiver();
    cleanups.push(() => hook.stop());
    const secret = "cli-webhook-secret-0123456789";
    const env = { ...process.env, HARNESSX_APPROVAL_WEBHOOK_SECRET: secret };
    const { child: worker } = await startWorker(prefix, env, ["--approval-webhook", hook.url]);
    cleanups.push(() => stop(worker));
    const submitter = new AgentRuntime({
      agents: [demoSupportAgent({ logger: silent })],
      backend: redisBackend({ url: redisUrl(), prefix }),
      logger: silent,
    });
    await submitter.start({ workers: false });
    cleanups.push(() => submitter.close());
    const refund = await submitter.submit("support", "Refund order 7");
    const parked = await refund.result();
    expect(parked.status).toBe("awaiting_approval");
    const [delivery] = await hook.received(1);
    const toolCallId = parked.pending[0]?.toolCallId ?? "";
    expect(JSON.parse(delivery?.body ?? "{}")).toMatchObject({
      runId: refund.runId,
      toolCallId,
      agent: "support",
      name: "refund_order",
    });
    expect(
      verifyApprovalSignature(
        delivery?.body ?? "",
        delivery?.headers["x-harnessx-signature"],
        secret,
      ),
    ).toBe(true);
  });

  it("refuses --approval-webhook without its secret or with a URL that is not http(s)", async () => {
    const { HARNESSX_APPROVAL_WEBHOOK_SECRET: _unset, ...env } = process.env;
    const args = ["worker", "--agents", "examples/distributed/agents.mjs", "--redis", redisUrl()];
    const missing = await harnessx([...args, "--approval-webhook", "http://127.0.0.1:9/hook"], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("HARNESSX_APPROVAL_WEBHOOK_SECRET");
    const withSecret = {
      ...env,
      HARNESSX_APPROVAL_WEBHOOK_SECRET: "cli-webhook-secret-0123456789",
    };
    const ftp = await harnessx([...args, "--approval-webhook", "ftp://127.0.0.1/hook"], withSecret);
    expect(ftp.code).toBe(2);
    expect(ftp.stderr).toContain("http: or https:");
    const help = await harnessx(["worker", "--help"]);
    expect(help.stdout).toContain("--approval-webhook <url>");
    expect(help.stdout).toContain("HARNESSX_APPROVAL_WEBHOOK_SECRET");
  });

  it("keeps the semi-space its node flags set, without a second process", async () => {
    await requireRedis();
    const prefix = uniquePrefix();
    cleanups.push(() => deletePrefix(prefix));
    const env = { ...process.env, NODE_OPTIONS: "--max-semi-space-size=16" };
    const { child: worker, started } = await startWorker(prefix, env);
    cleanups.push(() => stop(worker));
    expect(started).toMatchObject({ pid: worker.pid, semiSpaceMb: 16 });
  });

  it("stops its worker process when it is killed itself", async () => {
    await requireRedis();
    const prefix = uniquePrefix();
    cleanups.push(() => deletePrefix(prefix));
    const { child: launcher, stderr, started } = await startWorker(prefix);
    cleanups.push(async () => {
      await stop(launcher);
      if (alive(started.pid)) process.kill(started.pid, "SIGKILL");
    });
    expect(started.pid).not.toBe(launcher.pid);

    const killed = once(launcher, "exit");
    launcher.kill("SIGKILL");
    await killed;
    // The worker is told by its closed IPC channel: it stops as on SIGTERM, then exits.
    while (alive(started.pid)) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stderr()).toContain('"msg":"worker stopped"');
  });
});

/** Kills `child` unless it has exited, and waits for its exit. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}
