import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent, FlightRecorder } from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { lookup } from "../fixtures/replay-agent.js";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));
const cli = (args: readonly string[]) =>
  run(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], {
    cwd: root,
    timeout: 15_000,
  });

let folder = "";
let file = "";
let runId = "";

beforeAll(async () => {
  const recorder = new FlightRecorder();
  // Built as the fixture module builds it, plus the recorder.
  const recordingAgent = new Agent({
    provider: new ScriptedProvider([
      toolCallResponse([{ name: "lookup", input: { key: "k" }, id: "call_k" }]),
      textResponse("The value is known."),
    ]),
    tools: [lookup],
    config: { name: "replayed" },
    recorder,
    logger: pino({ level: "silent" }),
  });
  const result = await recordingAgent.run("What is k?", { sessionId: "s-cli" });
  runId = result.runId;
  folder = await mkdtemp(join(tmpdir(), "harnessx-replay-"));
  file = join(folder, "run.jsonl");
  await writeFile(file, await recorder.exportJsonl(runId));
});

afterAll(async () => {
  if (folder !== "") await rm(folder, { recursive: true });
});

describe("harnessx replay", () => {
  it("prints the recording's timeline without an agent", async () => {
    const { stdout } = await cli(["replay", file]);
    const lines = stdout.trim().split("\n");
    expect(lines[0]).toBe(`recording of run ${runId}: 8 entries`);
    expect(lines).toContain('  run_start         agent "replayed", session s-cli, 1 message(s)');
    expect(lines).toContain("  llm_request #1    1 message(s), tools [lookup]");
    expect(lines).toContain('  llm_response_raw #1 lookup({"key":"k"}) (tool_use)');
    expect(lines).toContain("  decision          call_k lookup: allow (policy) default: allow");
    expect(lines).toContain('  tool_result_raw   call_k lookup -> "value of k"');
    expect(lines.at(-1)).toBe('  run_end           completed: "The value is known."');
  });

  it("replays the run on the agent a module builds, and finds it the same", async () => {
    const { stdout } = await cli(["replay", file, "--agent", "test/fixtures/replay-agent.ts"]);
    expect(stdout.trim().split("\n")).toEqual([
      `replaying run ${runId} with agent "replayed"`,
      'replayed: completed: "The value is known."',
      'recorded: completed: "The value is known."',
      "output: same",
      "tool calls: same",
    ]);
  });

  it("reports a divergence as JSON and exits 1", async () => {
    const fixture = join(folder, "diverging-agent.mjs");
    const source = join(root, "test/fixtures/replay-agent.ts");
    await writeFile(
      fixture,
      `import { withoutTools } from ${JSON.stringify(source)};\nexport default withoutTools;\n`,
    );
    const failure: unknown = await cli(["replay", file, "--agent", fixture, "--json"]).then(
      () => new Error("expected exit code 1"),
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: 1 });
    const report = JSON.parse((failure as { stdout: string }).stdout) as Record<string, unknown>;
    expect(report).toMatchObject({
      runId,
      replayed: {
        status: "failed",
        error: {
          name: "ReplayDivergenceError",
          message:
            "Replay diverged at provider call 1: the tool list differs: recorded [lookup], sent [].",
        },
      },
      recorded: { status: "completed", output: "The value is known." },
      sameOutput: false,
    });
  });

  it("refuses a missing FILE with exit code 2", async () => {
    const failure: unknown = await cli(["replay"]).then(
      () => new Error("expected a non-zero exit"),
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr).toMatch(
      /^harnessx: missing required argument 'FILE.jsonl'/,
    );
  });
});
