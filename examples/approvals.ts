// Permissions and approvals: an agent that reads freely, asks before deleting and never runs
// `shell`. An "ask" parks the run (status "awaiting_approval", nothing executed); `resume` applies
// decisions, by run id on the same agent, or from `agent.parked(runId)` JSON on another agent.
import { z } from "zod";
import {
  Agent,
  type ParkedRun,
  PermissionManager,
  type Provider,
  type RunResult,
  tool,
} from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

// A fixture file system, so the example touches nothing on disk.
const files = new Map([
  ["notes.txt", "buy milk"],
  ["draft.txt", "old draft"],
  ["old.log", "..."],
  ["keep.log", "..."],
]);

const readFile = tool({
  name: "read_file",
  description: "Read a file.",
  input: z.object({ path: z.string() }),
  handler: ({ path }) => files.get(path) ?? `no such file: ${path}`,
});
const deleteFile = tool({
  name: "delete_file",
  description: "Delete a file.",
  input: z.object({ path: z.string() }),
  handler: ({ path }) => {
    console.log(`  (handler) deleting ${path}`);
    return files.delete(path) ? `deleted ${path}` : `no such file: ${path}`;
  },
});
const shell = tool({
  name: "shell",
  description: "Run a shell command.",
  input: z.object({ command: z.string() }),
  handler: () => {
    throw new Error("unreachable: the policy denies shell");
  },
});

const permissions = new PermissionManager({
  default: "allow",
  rules: [
    { tool: "delete_*", decision: "ask", reason: "deleting needs a person" },
    {
      tool: "delete_*",
      when: (call) => String(call.input.path).startsWith("/etc/"),
      decision: "deny",
    },
    { tool: "shell", decision: "deny", reason: "this agent never runs shell" },
  ],
});

// Every process builds the agent the same way: same tools, same policy.
const buildAgent = (provider: Provider) =>
  new Agent({ provider, tools: [readFile, deleteFile, shell], permissions });

const show = (label: string, result: RunResult) => {
  console.log(`${label}: ${result.status}${result.output === null ? "" : `: ${result.output}`}`);
  for (const pending of result.pending) {
    console.log(`  pending ${pending.name}(${JSON.stringify(pending.input)}): ${pending.reason}`);
  }
};

// 1. Resume on the same agent, by run id.
const agent = buildAgent(
  new ScriptedProvider([
    toolCallResponse([{ id: "del_draft", name: "delete_file", input: { path: "draft.txt" } }]),
    textResponse("The draft is gone."),
    toolCallResponse([
      { id: "read_notes", name: "read_file", input: { path: "notes.txt" } },
      { id: "del_old", name: "delete_file", input: { path: "old.log" } },
      { id: "del_keep", name: "delete_file", input: { path: "keep.log" } },
      { id: "del_passwd", name: "delete_file", input: { path: "/etc/passwd" } },
      { id: "run_shell", name: "shell", input: { command: "rm -rf /" } },
    ]),
  ]),
);
let result = await agent.run("Delete my draft");
show("run 1", result);
result = await agent.resume(result.runId, { decisions: { del_draft: "allow" } });
show("run 1 resumed", result);

// 2. Park, serialise, and resume on a second agent (as another process would).
result = await agent.run("Read my notes and tidy up");
show("run 2", result);
const json = JSON.stringify(agent.parked(result.runId)); // store it anywhere
console.log(
  `parked run as JSON: ${json.length} characters, files still there: ${files.has("old.log")}`,
);

const otherAgent = buildAgent(
  new ScriptedProvider([
    (request) => {
      const results = request.messages.at(-1)?.content ?? [];
      const lines = results.map((block) =>
        block.type === "tool_result" ? `${block.toolCallId}: ${block.content}` : "",
      );
      return textResponse(`Summary:${lines.map((line) => `\n  ${line}`).join("")}`);
    },
  ]),
);
const parked = JSON.parse(json) as ParkedRun;
result = await otherAgent.resume(parked, {
  decisions: {
    del_old: { decision: "allow", reason: "old log", by: "reviewer-2" },
    del_keep: { decision: "deny", reason: "we still need it", by: "reviewer-2" },
  },
});
show("run 2 resumed on another agent", result);
console.log(`files left: ${[...files.keys()].join(", ")}`);
