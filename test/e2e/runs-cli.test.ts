import { readFile } from "node:fs/promises";
import { userInfo } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  AgentRuntime,
  PermissionManager,
  type RunHandle,
  redisBackend,
  tool,
} from "../../src/index.js";
import {
  demoSupportAgent,
  ScriptedProvider,
  textResponse,
  toolCallResponse,
} from "../../src/testing.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "../integration/redis.js";
import { harnessx } from "../support/cli.js";
import { freePort } from "../support/free-port.js";
import { silent } from "../support/silent.js";

// `harnessx runs …`, `approve` and `deny` from the built package, against runs a runtime in this
// process stores in a real Redis and advances with its workers.

const root = new URL("../../", import.meta.url);

let prefix = "";
let runtime: AgentRuntime;
const answered: RunHandle[] = [];
const parked: RunHandle[] = [];
/** The Redis flags of every command. */
let target: string[] = [];
const CANARY = "canary-cli-55120";

/** `keys`: its one call carries a field the tool marks secret, and waits for a person. */
const keysAgent = () =>
  new Agent({
    provider: new ScriptedProvider([
      toolCallResponse([{ name: "unlock", input: { device: "laptop", phrase: CANARY } }]),
      textResponse("unlocked"),
    ]),
    tools: [
      tool({
        name: "unlock",
        description: "Unlocks a device.",
        input: z.object({ device: z.string(), phrase: z.string().meta({ secret: true }) }),
        handler: async () => "unlocked",
      }),
    ],
    permissions: new PermissionManager({
      default: "allow",
      rules: [{ tool: "unlock", decision: "ask", reason: "unlocking" }],
    }),
    config: { name: "keys" },
    logger: silent,
  });

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
  for (const order of [1, 2, 3]) {
    const handle = await runtime.submit("support", `Where is order ${order}?`);
    expect((await handle.result()).status).toBe("completed");
    answered.push(handle);
  }
  for (const order of [11, 12, 13]) {
    const handle = await runtime.submit("support", `Refund order ${order}`);
    expect((await handle.result()).status).toBe("awaiting_approval");
    parked.push(handle);
  }
});

afterAll(async () => {
  await runtime?.close();
  if (prefix !== "") await deletePrefix(prefix);
});

const allRunIds = () => [...answered, ...parked].map((handle) => handle.runId);
const noStack = (text: string) => expect(text).not.toMatch(/^\s+at /m);

describe("harnessx approve and deny", () => {
  it("approves a parked call as --by with --reason; the run completes on a worker", async () => {
    const run = parked[0] as RunHandle;
    const approval = ["approve", run.runId, "call_1", "--reason", "receipt checked"];
    const outcome = await harnessx([...approval, "--by", "ops-lead", "--json", ...target]);
    expect(outcome).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(outcome.stdout)).toEqual({
      runId: run.runId,
      toolCallId: "call_1",
      decided: "allow",
      by: "ops-lead",
      reason: "receipt checked",
    });
    expect((await run.result()).output).toBe("Done: Refunded order 11.");
    const { decisions } = await runtime.get(run.runId);
    expect(decisions).toMatchObject([
      {
        toolCallId: "call_1",
        name: "refund_order",
        decision: "allow",
        by: "ops-lead",
        reason: "receipt checked",
      },
    ]);

    const again = await harnessx(["deny", run.runId, "call_1", ...target]);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe("");
    expect(again.stderr).toBe(
      `harnessx: already_decided: Tool call "call_1" of run "${run.runId}" is not pending: it is already decided.\n`,
    );
  });

  it("denies as the user running it, on the Redis of $REDIS_URL, and says so", async () => {
    const run = parked[1] as RunHandle;
    const denial = ["deny", run.runId, "call_1", "--reason", "no receipt", "--prefix", prefix];
    const outcome = await harnessx(denial, { ...process.env, REDIS_URL: redisUrl() });
    const user = userInfo().username;
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toBe(
      `denied call_1 of run ${run.runId} as "${user}"; the run goes on on a worker\n`,
    );
    expect((await run.result()).status).toBe("completed");
    expect((await runtime.get(run.runId)).decisions).toMatchObject([
      { toolCallId: "call_1", decision: "deny", by: user, reason: "no receipt" },
    ]);
  });

  it("fails with exit code 1 and the error's code for an unknown run or call", async () => {
    const unknownRun = await harnessx(["approve", "no-such-run", "call_1", ...target]);
    expect(unknownRun).toEqual({
      code: 1,
      stdout: "",
      stderr: 'harnessx: run_not_found: No run "no-such-run" exists.\n',
    });
    const run = parked[2] as RunHandle;
    const unknownCall = await harnessx(["approve", run.runId, "call_9", "--json", ...target]);
    expect(unknownCall.code).toBe(1);
    expect(JSON.parse(unknownCall.stdout)).toEqual({
      error: {
        code: "tool_call_not_found",
        message: `Run "${run.runId}" has no tool call "call_9".`,
      },
    });
  });
});

describe("harnessx approve --input and respond", () => {
  // Runs of their own (another prefix): the `runs ls` tests count the shared prefix's runs.
  let own: AgentRuntime;
  let ownPrefix = "";
  let target: string[] = [];
  beforeAll(async () => {
    ownPrefix = uniquePrefix();
    target = ["--redis", redisUrl(), "--prefix", ownPrefix];
    own = new AgentRuntime({
      agents: [demoSupportAgent({ logger: silent })],
      backend: redisBackend({ url: redisUrl(), prefix: ownPrefix }),
      logger: silent,
    });
    await own.start();
  });
  afterAll(async () => {
    await own?.close();
    if (ownPrefix !== "") await deletePrefix(ownPrefix);
  });
  const park = async () => {
    const handle = await own.submit("support", "Refund order 21");
    expect((await handle.result()).status).toBe("awaiting_approval");
    return handle;
  };

  it("approves an edited input, checked with the agents module; the handler gets the edit", async () => {
    const run = await park();
    const edit = ["approve", run.runId, "call_1", "--input", '{"orderId":"22"}', "--by", "ops"];
    const agents = ["--agents", "examples/distributed/agents.mjs"];
    const noAgents = await harnessx([...edit, ...target]);
    expect(noAgents.code).toBe(2);
    expect(noAgents.stderr).toContain("approve --input needs --agents MODULE");
    const notJson = await harnessx(["approve", run.runId, "call_1", "--input", "{", ...target]);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toContain("--input must be JSON");
    const invalid = await harnessx([
      ...["approve", run.runId, "call_1", "--input", '{"orderId":22}'],
      ...agents,
      ...target,
    ]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain("harnessx: input_invalid:");

    const outcome = await harnessx([...edit, ...agents, "--json", ...target]);
    expect(outcome).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(outcome.stdout)).toMatchObject({
      decided: "allow",
      input: { orderId: "22" },
    });
    expect((await run.result()).output).toBe("Done: Refunded order 22.");
    expect((await own.get(run.runId)).decisions).toMatchObject([
      { decision: "allow", by: "ops", editedInput: { orderId: "22" } },
    ]);
  });

  it("respond --content answers in the tool's place; --error marks it failed", async () => {
    const run = await park();
    const outcome = await harnessx([
      ...["respond", run.runId, "call_1", "--content", "refunds are paused", "--error"],
      ...["--by", "ops", ...target],
    ]);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toBe(
      `answered call_1 of run ${run.runId} as "ops"; the run goes on on a worker\n`,
    );
    expect((await run.result()).status).toBe("completed");
    expect((await own.get(run.runId)).decisions).toMatchObject([
      {
        decision: "respond",
        by: "ops",
        response: { content: "refunds are paused", isError: true },
      },
    ]);
    const missing = await harnessx(["respond", run.runId, "call_1", ...target]);
    expect(missing.code).toBe(2);
  });
});

describe("harnessx runs", () => {
  it("ls --json pages through every run by cursor, newest first", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const paging: string[] = cursor === null ? [] : ["--cursor", cursor];
      const outcome = await harnessx([
        "runs",
        "ls",
        "--limit",
        "2",
        "--json",
        ...paging,
        ...target,
      ]);
      expect(outcome).toMatchObject({ code: 0, stderr: "" });
      const page = JSON.parse(outcome.stdout) as {
        runs: Array<{ runId: string }>;
        nextCursor: string | null;
      };
      expect(page.runs.length).toBeLessThanOrEqual(2);
      seen.push(...page.runs.map((run) => run.runId));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(seen).toEqual(allRunIds().reverse());
  });

  it("ls --all reads every page, with progress on stderr only", async () => {
    const outcome = await harnessx(["runs", "ls", "--all", "--limit", "4", "--json", ...target]);
    expect(outcome.code).toBe(0);
    const page = JSON.parse(outcome.stdout) as { runs: Array<{ runId: string }>; nextCursor: null };
    expect(page.runs.map((run) => run.runId)).toEqual(allRunIds().reverse());
    expect(page.nextCursor).toBeNull();
    expect(outcome.stderr.trim().split("\n")).toEqual([
      "harnessx: read page 1: 4 run(s), more to read",
      "harnessx: read page 2: 6 run(s)",
    ]);
  });

  it("ls prints a table, filtered by status and agent", async () => {
    const waiting = parked[2] as RunHandle;
    const filters = ["--status", "awaiting_approval", "--agent", "support"];
    const outcome = await harnessx(["runs", "ls", ...filters, ...target]);
    expect(outcome.code).toBe(0);
    const lines = outcome.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^RUN\s+AGENT\s+STATUS\s+PHASE\s+PENDING\s+ITER\s+TOKENS\s+UPDATED$/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(new RegExp(`^${waiting.runId}\\s+support\\s+awaiting_approval\\s`));
  });

  it("show prints the summary, pending calls, decisions and conversation", async () => {
    const waiting = parked[2] as RunHandle;
    const outcome = await harnessx(["runs", "show", waiting.runId, ...target]);
    expect(outcome.code).toBe(0);
    const lines = outcome.stdout.trim().split("\n");
    expect(lines[0]).toBe(`run       ${waiting.runId}`);
    expect(lines).toContain("status    awaiting_approval (phase awaitingApproval)");
    expect(lines).toContain("pending (1)");
    expect(lines).toContain('  call_1  refund_order({"orderId":"13"})  refunds need a person');
    expect(lines).toContain("decisions (0)");
    expect(lines.slice(-3)).toEqual([
      "conversation (2 messages)",
      '    1 user      "Refund order 13"',
      '    2 assistant refund_order({"orderId":"13"})',
    ]);

    const approved = parked[0] as RunHandle;
    const json = await harnessx(["runs", "show", approved.runId, "--json", ...target]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      runId: approved.runId,
      status: "completed",
      decisions: [{ toolCallId: "call_1", decision: "allow", by: "ops-lead" }],
    });
    const text = await harnessx(["runs", "show", approved.runId, ...target]);
    expect(text.stdout).toMatch(
      /^ {2}\S+ \S+ {2}call_1 refund_order: allow by ops-lead {2}"receipt checked"$/m,
    );
  });

  it("show prints model calls with tokens, tool calls and checkpoints, never a secret input", async () => {
    // On a prefix of its own, so that the other tests' run counts stay as they are.
    const own = uniquePrefix();
    const keys = new AgentRuntime({
      agents: [keysAgent()],
      backend: redisBackend({ url: redisUrl(), prefix: own }),
      logger: silent,
    });
    await keys.start();
    const secretRun = await keys.submit("keys", "unlock my laptop");
    expect((await secretRun.result()).status).toBe("awaiting_approval");
    await keys.close();
    const target = ["--redis", redisUrl(), "--prefix", own];
    const [text, json] = await Promise.all([
      harnessx(["runs", "show", secretRun.runId, ...target]),
      harnessx(["runs", "show", secretRun.runId, "--json", ...target]),
    ]).finally(() => deletePrefix(own));
    expect(text.code).toBe(0);
    const lines = text.stdout.trim().split("\n");
    expect(lines).toContain("model calls (1)");
    expect(text.stdout).toMatch(
      /^ {4}1 \S+ \S+ {2}scripted {2}10 in \/ 5 out \(cache read 0, write 0\)/m,
    );
    expect(lines).toContain('    1 call_1 unlock({"device":"laptop","phrase":"[redacted]"})');
    expect(lines).toContain("checkpoints (2)");
    expect(text.stdout).toMatch(/awaitingApproval \(awaiting_approval, iteration 1\)$/m);
    expect(JSON.parse(json.stdout).pending[0].input).toEqual({
      device: "laptop",
      phrase: "[redacted]",
    });
    for (const output of [text.stdout, json.stdout]) expect(output).not.toContain(CANARY);
  });

  it("show of an unknown run exits 1 with the error's code, no stack", async () => {
    const outcome = await harnessx(["runs", "show", "no-such-run", ...target]);
    expect(outcome).toEqual({
      code: 1,
      stdout: "",
      stderr: 'harnessx: run_not_found: No run "no-such-run" exists.\n',
    });
  });

  it("cancel ends a parked run; a second cancel fails: the run has finished", async () => {
    const run = parked[2] as RunHandle;
    const outcome = await harnessx([
      "runs",
      "cancel",
      run.runId,
      "--by",
      "on-call",
      "--json",
      ...target,
    ]);
    expect(outcome.code).toBe(0);
    expect(JSON.parse(outcome.stdout)).toEqual({
      runId: run.runId,
      cancelRequested: true,
      status: "awaiting_approval",
      by: "on-call",
    });
    expect((await run.result()).status).toBe("cancelled");
    const shown = await harnessx(["runs", "show", run.runId, ...target]);
    expect(shown.stdout).toContain("cancelled by on-call\n");
    const again = await harnessx(["runs", "cancel", run.runId, ...target]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(
      `harnessx: run_finished: Run "${run.runId}" has finished (cancelled): there is nothing to cancel.\n`,
    );
  });

  it("fails with exit code 1, naming the backend, when Redis does not answer", async () => {
    const port = await freePort();
    const outcome = await harnessx(["runs", "ls", "--redis", `redis://127.0.0.1:${port}`]);
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe("");
    expect(outcome.stderr).toMatch(
      new RegExp(
        `^harnessx: backend_unavailable: Cannot reach Redis at redis://127.0.0.1:${port}: `,
      ),
    );
    noStack(outcome.stderr);
  });
});

describe("harnessx usage", () => {
  const { REDIS_URL: _url, ...withoutRedis } = process.env;

  it.each([
    {
      args: ["runs", "ls", "--status", "lost"],
      message: "option '--status <status>' argument 'lost' is invalid",
    },
    {
      args: ["runs", "ls", "--limit", "0"],
      message: "option '--limit <n>' argument '0' is invalid",
    },
    { args: ["runs", "ls", "--frob"], message: "unknown option '--frob'" },
    { args: ["runs", "show"], message: "missing required argument 'run'" },
    { args: ["approve", "run-1"], message: "missing required argument 'call'" },
    { args: ["runs", "frob"], message: "unknown command 'frob'" },
    { args: ["runs", "ls"], message: "runs ls needs --redis <url> (or REDIS_URL)" },
    { args: ["approve", "run-1", "call_1"], message: "approve needs --redis <url> (or REDIS_URL)" },
  ])("refuses $args with exit code 2: $message", async ({ args, message }) => {
    const outcome = await harnessx(args, withoutRedis);
    expect(outcome.code).toBe(2);
    expect(outcome.stdout).toBe("");
    expect(outcome.stderr.startsWith(`harnessx: ${message}`)).toBe(true);
    noStack(outcome.stderr);
  });

  it("prints package.json's version for --version", async () => {
    const { version } = JSON.parse(await readFile(new URL("package.json", root), "utf8")) as {
      version: string;
    };
    expect(await harnessx(["--version"])).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
  });
});

describe("harnessx demo and tour --json", () => {
  it("prints the demo's outcome as one JSON document", async () => {
    const outcome = await harnessx(["demo", "--json"]);
    expect(outcome.code).toBe(0);
    const report = JSON.parse(outcome.stdout) as {
      runs: number;
      completed: number;
      lines: string[];
    };
    expect(report).toMatchObject({ runs: 36, completed: 36 });
    expect(report.lines).toContain('  approving call_1 as "demo-operator"');
  });

  it("prints the tour's lines as one JSON document", async () => {
    const outcome = await harnessx(["tour", "--json"]);
    expect(outcome.code).toBe(0);
    const { lines } = JSON.parse(outcome.stdout) as { lines: string[] };
    expect(lines).toContain("  hook TOOL_CALL_END   delete_file -> deleted old.log");
  });
});
