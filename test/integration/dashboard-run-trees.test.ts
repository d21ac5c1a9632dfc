// The dashboard API's run trees (SPEC §12.1, §14): GET /api/runs?rootRunId= and ?parentRunId=.
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  AgentRuntime,
  createDashboard,
  memoryBackend,
  PermissionManager,
  tool,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { silent } from "./fixtures.js";

const cleanups: Array<() => Promise<void>> = [];
const deleteFile = tool({
  name: "delete_file",
  description: "Deletes a file.",
  input: z.object({ path: z.string() }),
  handler: async ({ path }) => `deleted ${path}`,
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("GET /api/runs of a run tree", () => {
  it("filters runs by root and by parent, each child naming its parent and root", async () => {
    const researcher = new Agent({
      provider: new ScriptedProvider([textResponse("notes")], { loop: true }),
      config: { name: "researcher" },
      logger: silent,
    });
    const lead = new Agent({
      provider: new ScriptedProvider(
        [
          toolCallResponse([{ name: "research", input: { input: "otters" } }]),
          textResponse("done"),
        ],
        { loop: true },
      ),
      config: { name: "lead" },
      tools: [researcher.asTool({ name: "research", description: "Research" })],
      logger: silent,
    });
    const runtime = new AgentRuntime({
      agents: [lead, researcher],
      backend: memoryBackend(),
      logger: silent,
    });
    await runtime.start();
    cleanups.push(() => runtime.close({ timeoutMs: 1000 }));
    const server = await createDashboard({
      runtime,
      readOpen: true,
      tokens: { ops: "ops-token-0123456789" },
    }).listen({ port: 0 });
    cleanups.push(() => server.close());
    const handle = await runtime.submit("lead", "go");
    await handle.result();
    const other = await runtime.submit("lead", "again");
    await other.result();

    const get = async (query: string) => {
      const response = await fetch(new URL(`api/runs?${query}`, server.url));
      return {
        status: response.status,
        body: (await response.json()) as { runs: Array<Record<string, unknown>> },
      };
    };
    const tree = await get(`rootRunId=${encodeURIComponent(handle.runId)}`);
    expect(tree.status).toBe(200);
    expect(tree.body.runs.map((run) => run.runId).sort()).toEqual(
      [handle.runId, `${handle.runId}.call_1`].sort(),
    );
    const children = await get(`parentRunId=${encodeURIComponent(handle.runId)}`);
    expect(children.body.runs).toEqual([
      expect.objectContaining({
        runId: `${handle.runId}.call_1`,
        agent: "researcher",
        parentRunId: handle.runId,
        parentToolCallId: "call_1",
        rootRunId: handle.runId,
      }),
    ]);
    expect((await get("rootRunId=")).status).toBe(400);
    // The tree's list takes the flat list's search and time range too.
    const root = encodeURIComponent(handle.runId);
    const found = await get(`rootRunId=${root}&q=${encodeURIComponent(`${handle.runId}.call`)}`);
    expect(found.body.runs.map((run) => run.runId)).toEqual([`${handle.runId}.call_1`]);
    const later = await get(`rootRunId=${root}&since=${Date.now() + 60_000}`);
    expect(later.body.runs).toEqual([]);
    const earlier = await get(`rootRunId=${root}&until=${Date.now() + 60_000}`);
    expect(earlier.body.runs).toHaveLength(2);
    expect((await get(`rootRunId=${root}&since=5&until=4`)).status).toBe(400);
  });

  it("gives each inbox item its tree's root: a parked child's is its parent's root", async () => {
    const researcher = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "delete_file", input: { path: "a.log" }, id: "k1" }]),
        textResponse("notes"),
      ]),
      config: { name: "researcher" },
      tools: [deleteFile],
      permissions: new PermissionManager({ rules: [{ tool: "delete_file", decision: "ask" }] }),
      logger: silent,
    });
    const lead = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "research", input: { input: "otters" } }]),
        toolCallResponse([{ name: "delete_file", input: { path: "b.log" }, id: "k2" }]),
        textResponse("done"),
      ]),
      config: { name: "lead" },
      tools: [researcher.asTool({ name: "research", description: "Research" }), deleteFile],
      permissions: new PermissionManager({ rules: [{ tool: "delete_file", decision: "ask" }] }),
      logger: silent,
    });
    const runtime = new AgentRuntime({
      agents: [lead, researcher],
      backend: memoryBackend(),
      logger: silent,
    });
    await runtime.start();
    cleanups.push(() => runtime.close({ timeoutMs: 1000 }));
    const server = await createDashboard({
      runtime,
      readOpen: true,
      tokens: { ops: "ops-token-0123456789" },
    }).listen({ port: 0 });
    cleanups.push(() => server.close());
    const handle = await runtime.submit("lead", "go");
    const child = `${handle.runId}.call_1`;
    const inbox = async () => {
      const response = await fetch(new URL("api/approvals", server.url));
      return ((await response.json()) as { approvals: Array<Record<string, unknown>> }).approvals;
    };
    await expect
      .poll(inbox)
      .toEqual([
        expect.objectContaining({ runId: child, toolCallId: "k1", rootRunId: handle.runId }),
      ]);
    await runtime.approve(child, "k1", { by: "ops" });
    // The root parks in turn: its own id is its root.
    await expect
      .poll(inbox)
      .toEqual([
        expect.objectContaining({ runId: handle.runId, toolCallId: "k2", rootRunId: handle.runId }),
      ]);
  });
});
