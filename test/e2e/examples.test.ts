import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));
const examples = readdirSync(new URL("../../examples/", import.meta.url))
  .filter((name) => name.endsWith(".ts"))
  .sort();

/** Key lines per known example; every line must appear exactly in the example's output. */
const EXPECTED: Record<string, readonly string[]> = {
  "agent-basics.ts": [
    "no provider: failed, ProviderMissingError: This agent has no provider: pass one as `new Agent({ provider })` before running it.",
    'greeter: completed, output "Hello!"',
    "JSON round-trip unchanged: true",
    "with history (3 messages): Still here.",
    "started after the block: false",
  ],
  "approval-webhook.ts": [
    "run: awaiting_approval",
    "listener: wire_money waits (money moves need a person)",
    "receiver: busy (503), harnessx will retry",
    'receiver: slack message :raised_hand: *treasury* wants `wire_money` {"amount":900,"iban":"DE89 3704","apiKey":"[redacted]"} (money moves need a person)',
    "receiver: 2 deliveries, 1 message",
    "run: The transfer is done.",
  ],
  "approvals.ts": [
    "run 1: awaiting_approval",
    '  pending delete_file({"path":"draft.txt"}): deleting needs a person',
    "run 1 resumed: completed: The draft is gone.",
    "run 2: awaiting_approval",
    "  del_keep: Denied by reviewer: we still need it",
    "  run_shell: Permission denied: this agent never runs shell",
    "files left: notes.txt, keep.log",
  ],
  "dashboard.ts": [
    "run: awaiting_approval",
    "without a token: 401",
    'inbox: refund_order {"orderId":"7","apiKey":"[redacted]","card":{"number":"[redacted]","expiry":"12/29"}} (refunds need a person)',
    'approve: 200 {"decided":"allow"}',
    "run: Done: refunded order 7.",
    "decided by ops-lead: order checked",
    "model call 1: 10 in, 5 out",
    "model call 2: 10 in, 5 out",
    "checkpoints: afterLlm → awaitingApproval → dispatch → compose → afterLlm → done",
    'tool call: refund_order {"orderId":"7","apiKey":"[redacted]","card":{"number":"[redacted]","expiry":"12/29"}} → Refunded order 7.',
    "inbox with tool=close_ticket: 2 calls",
    "bulk approve: 200 true, true",
    "ticket run: Closed.",
  ],
  "durable-runs.ts": [
    "event: tool_start",
    "event: result completed",
    "checkpoints: afterLlm → dispatch → compose → afterLlm → done",
    "refund run: awaiting_approval refund_order",
    "after approval: Done: Refunded order 7.",
    "after denial: Done: Denied by reviewer: not eligible.",
    "same runId, same run: true completed",
    "rejected submit: config_invalid runId question-44",
    "completed runs: 4",
  ],
  "research-and-write.ts": [
    "handoff: lead -> writer",
    "direct: completed under writer, 4 model calls",
    "durable: completed under writer",
    "title: Lisbon, briefly",
    "body: Line 28 has climbed the Alfama hills since 1914 in wooden Remodelado cars. Pastéis de nata come from the Jerónimos monastery; Belém still bakes them daily.",
    "sent back: Your answer does not match the required output schema: body: Invalid input: expected string, received undefined",
    "tree: <run> lead completed",
    "tree: <run>.research_1 researcher completed",
    "tree: <run>.research_2 researcher completed",
    "child: researcher, parent <run>: Line 28 has climbed the Alfama hills since 1914 in wooden Remodelado cars.",
    "lead's events: child_started, child_started, child_finished, child_finished",
  ],
  "extension-audit.ts": [
    "  hook: lookup done, 3 call(s) this session",
    "  hook: lookup done, 1 call(s) this session",
    "run 1 tool results: record a1, owner key [token] | 1 call(s)",
    "system prompt of the last request: Tool calls this session: 2.",
    "installed: audit",
    "installed: audit, greeting",
    "cleanup: greeting",
    "cleanup: audit",
    "after close, audit_count registered: false",
  ],
  "hide-fixture-token.ts": [
    'call_1 isError=false: "api_url=https://example.test\\napi_key=[redacted]"',
    'call_2 isError=true: "no config named missing ([redacted]=abc)"',
    '"fixture-token" left in the conversation: false',
  ],
  "hooks.ts": [
    "HOOK_PAYLOADS[TOOL_CALL_END] is ToolCallEndData: true",
    "Tool result: call_1 error: false",
    "Tool result: call_2 error: true",
    "on error: empty query (phase dispatch)",
    "first run: completed: Done.",
  ],
  "knowledge.ts": [
    'KNOWLEDGE_ACCESSED knowledge_search found=true query="hotel receipt" hits=2',
    "  handbook/travel/booking.md: …flights through the travel desk at least two weeks ahead. Hotel costs up to 150 EUR a night need no approval; keep the hotel receipt for your expenses.",
    "KNOWLEDGE_ACCESSED knowledge_read found=true path=travel/booking.md bodyChars=186",
    "KNOWLEDGE_ACCESSED knowledge_read found=false path=../skills.ts bodyChars=0",
    'knowledge_read ../skills.ts -> error: Path "../skills.ts" is outside knowledge bundle "handbook"; only relative paths inside it can be read.',
    "run: completed: Keep the hotel receipt and submit it within 30 days.",
  ],
  "many-runs.ts": [
    "bulk: 20 of 20 completed",
    "served by priority: urgent, normal, low",
    "after rate_limited: completed, Answer to refused once",
    "ops: awaiting_approval",
    "ops after the timeout: Done: Denied by reviewer: approval timed out",
    "audit: deny by harnessx (approval timed out)",
  ],
  "mcp-tools.ts": [
    "tools: create_entities, create_relations, add_observations, delete_entities, delete_observations, delete_relations, read_graph, search_nodes, open_nodes",
    'create_entities -> [ { "name": "Lisbon", "entityType": "city", "observations": [ "sunny in June" ] } ]',
    'search_nodes -> error: Invalid input for tool "search_nodes": query: must be string',
    'delete_entities -> error: Permission denied: rule "delete_*": deny',
    "completed: Lisbon is sunny in June.",
    "closed with the agent: true",
  ],
  "middleware-order.ts": [
    "output: X+A+B|A|B",
    "order: A.afterLlmCall -> B.afterLlmCall -> A.beforeToolExecution -> B.beforeToolExecution -> A.afterToolExecution -> B.afterToolExecution -> plain.afterToolExecution -> A.afterLlmCall -> B.afterLlmCall",
    "middleware after the block: 2",
  ],
  "normalize-search.ts": [
    'with NormalizeSearch: completed: "I found: Results for harnessx"',
    "registration closed: true, middleware left: 0",
    'without it: completed: "I found: Results for    harnessx   "',
  ],
  "record-replay.ts": [
    'recorded: completed: "Order 42 has shipped."',
    "entries: run_start, llm_request, llm_response_raw, decision, tool_result_raw, llm_request, llm_response_raw, run_end",
    'raw final response (before middleware): [{"type":"text","text":"  Order 42 has shipped.  "}]',
    "the API key in the export: false",
    "same output: true",
    'replayed without middleware: "  Order 42 has shipped.  "',
    "diverged: ReplayDivergenceError: Replay diverged at provider call 1: the tool list differs: recorded [order_status], sent [].",
  ],
  "require-query.ts": [
    "blank query: status failed, pending 0",
    "error: MiddlewareError in beforeToolExecution: RequireQuery.beforeToolExecution threw: Search query must not be blank",
    "real query: status completed: Durable runs survive a crash.",
  ],
  "sandbox.ts": [
    "javascript: 2",
    "python: 45",
    "bash: hi from harnessx-example",
    "command: secret=unset (exit code 3)",
    "capped: [output truncated at 64 bytes]",
    "  SANDBOX_EXEC command exit=null timedOut=true",
    "timed out: true, exit code null",
    "daemon: started, alive after the call: false",
    'bash tool: "exit code: 0\\nstdout:\\n42\\n"',
    "answer.txt: 42",
    "agent: completed: The answer is in answer.txt.",
  ],
  "live-events.ts": [
    'delta: "Order 42 "',
    'delta: "ships "',
    'delta: "today."',
    "result: completed: Order 42 ships today.",
    "cancelled run: cancelled (RunCancelledError), provider saw abort: true",
    "cancelled by: ops-lead",
  ],
  "run-store.ts": [
    "page 1: awaiting_approval, completed, completed",
    "page 2: completed, completed, completed",
    "page 3: completed",
    "alice's completed runs: 6",
    "waiting for a person: refund_order",
    "found by an id prefix: true",
    "bob's runs by q: 1",
    "created in the last hour: 7",
    "last hour: 6 completed, 1 waiting, support ran 7 runs",
    "refund run: completed, 4 messages, 2 iterations",
    "  decision: refund_order allow by ops-lead (a loyal customer)",
    "deleted the refund run: get says run_not_found",
    "bob's session: 0 runs deleted (his run still waits), 0 saved states",
    "pruned 5 finished runs (0 unreadable); left: awaiting_approval",
  ],
  "scoped-tokens.ts": [
    "support's inbox: refund_order",
    "dba's inbox: drop_table",
    "support approves the drop: 403 forbidden",
    "support approves the refund: 200",
    "dba denies the drop: 200",
    "runs: completed, completed",
  ],
  "skills.ts": [
    "  - incident-summary: Summarise an incident for the status page in three sentences.",
    "  - release-notes: Write release notes from a list of merged changes.",
    "SKILL_INVOKED release-notes: found=true source=skills/release-notes/SKILL.md bodyChars=152",
    'skill({"name":"release-notes"}) -> # Release notes',
    'skill_read({"name":"release-notes","path":"template.md"}) -> ## vX.Y.Z — date',
    'skill_read({"name":"release-notes","path":"../incident-summary/SKILL.md"}) -> error: Path "../incident-summary/SKILL.md" is outside the folder of skill "release-notes"; only relative paths inside it can be read.',
    "SKILL_INVOKED changelog: found=false source=none bodyChars=0",
    "run: completed",
  ],
  "streaming.ts": [
    'text_delta "Lisbon i"',
    'text_delta "s sunny "',
    'tool_end weather -> {"city":"Lisbon","forecast":"sunny","celsius":21}',
    'text_delta "LISBON IS SUNNY TODAY, 21 DEGREES."',
    'result completed: "LISBON IS SUNNY TODAY, 21 DEGREES."',
  ],
  "timeouts-and-errors.ts": [
    'call_1: Tool "slow_lookup" timed out after 50 ms.',
    "run: completed: Carried on without it.",
    "provider: failed, ProviderError code=timeout",
    "parked: __proto__",
    "resumed: completed: Skipped it.",
    "input: InputInvalidError code=input_invalid fault=caller",
  ],
  "tracing.ts": [
    "invoke_agent forecaster  request.model=model-small usage.input_tokens=20 usage.output_tokens=10 run.status=completed",
    "  chat model-small  request.model=model-small response.finish_reasons=tool_use usage.input_tokens=10 usage.output_tokens=5",
    "  execute_tool weather  tool.call.id=call_1",
    "handle request",
    "  invoke_agent forecaster  request.model=model-small usage.input_tokens=20 usage.output_tokens=10 run.status=completed",
    "    execute_tool weather  tool.call.id=call_1",
    "handle durable request",
    "  invoke_agent forecaster  request.model=model-small usage.input_tokens=20 usage.output_tokens=10 run.status=completed",
    "    chat model-small  request.model=model-small response.finish_reasons=tool_use usage.input_tokens=10 usage.output_tokens=5",
    "    execute_tool weather  tool.call.id=call_1",
    "traces: 3",
  ],
  "backend-roles.ts": [
    "RunStore save: afterLlm (running)",
    "RunStore save: dispatch (running), lease given up",
    "CallLedger commit: call_1 of iteration 1, first: true",
    "RunStore save: done (completed), lease given up",
    "result: completed",
  ],
  "wire-transfer-approvals.ts": [
    'transfer: awaiting_approval, wire({"to":"acme","amount":900})',
    "approvals: 0/2",
    'slack: wire({"to":"acme","amount":900}) waits: money leaves the company',
    "alice edits to 5000: approval_refused",
    "after alice: awaiting_approval, given by alice",
    "alice again: approver_repeated",
    "  (handler) wiring 500 to acme",
    "after bob: Transfer: sent 500 to acme",
    'audit: alice allow edited to {"to":"acme","amount":500}',
    'audit: bob allow edited to {"to":"acme","amount":500}',
    "respond: Transfer: payee not verified: no money sent",
  ],
  "tool-registry.ts": [
    'registry.execute (no middleware): "Results for   padded  "',
    'a JSON value, stringified: {"documents":3,"indexed":true}',
    'a BigInt: isError=true "Tool \\"ledger\\" returned a value JSON cannot represent (a BigInt at \\"amount\\"); return a string or JSON data."',
    'through the agent: call_1 "Results for padded"',
    'through the agent: call_2 "Permission denied: rule \\"broken\\": deny"',
  ],
  // The provider examples run offline here: runExample leaves the API keys out.
  "openai-provider.ts": [
    "mode: recorded replies (no network)",
    'status: completed, output: "Lisbon is sunny, 21 °C."',
    'usage: {"inputTokens":424,"outputTokens":27,"cacheReadTokens":256,"cacheWriteTokens":0}',
    'tool result sent back: "Lisbon: sunny, 21 °C"',
    "ProviderError: code rate_limited, retryable true, retryAfterMs 2000",
  ],
  "anthropic-provider.ts": [
    "mode: recorded replies (no network)",
    'text_delta "Let me "',
    'tool_start get_weather {"city":"Lisbon"}',
    'status: completed, output: "Lisbon is sunny, 21 °C."',
    'usage: {"inputTokens":65,"outputTokens":39,"cacheReadTokens":1200,"cacheWriteTokens":1200}',
    'last tool\'s cache_control: {"type":"ephemeral"}',
  ],
  "compatible-servers.ts": [
    "mode: local stand-in server (no network)",
    'ollama: completed, output "Lisbon is sunny, 21 °C.", stopReason end_turn',
    'reasoning kept as thinking: "The tool said sunny."',
    "sent max_tokens: 512, prompt_cache_key sent: false",
    'groq: completed, output "Lisbon is sunny, 21 °C."',
    "extraBody sent: parallel_tool_calls=false, service_tier=on_demand",
  ],
  "ai-sdk-model.ts": [
    "mode: local stand-in server (no network)",
    "provider: local.chat, model qwen3",
    'run: completed, output "Lisbon is sunny, 21 °C."',
    'runStream: completed, output "Lisbon is sunny, 21 °C."',
    'tool result sent back: {"role":"tool","tool_call_id":"call_local_1","content":"Lisbon: sunny, 21 °C"}',
    "providerOptions sent: user=example-user",
  ],
};

const outputs = new Map<string, Promise<string[]>>();

/** The example's stdout lines; each example runs once per test file. */
function runExample(name: string): Promise<string[]> {
  let output = outputs.get(name);
  if (output === undefined) {
    // execFile rejects on a non-zero exit code or on the timeout, failing the test.
    output = run(process.execPath, ["--import", "tsx", `examples/${name}`], {
      cwd: root,
      // No test touches the network: examples with a real model run on recorded replies.
      env: { ...process.env, OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "" },
      timeout: 15_000,
    }).then(({ stdout }) => stdout.split("\n"));
    outputs.set(name, output);
  }
  return output;
}

describe("examples/", () => {
  it("holds at least the documented examples", () => {
    expect(examples).toEqual(expect.arrayContaining(Object.keys(EXPECTED)));
  });

  it.each(examples)("%s runs, exits 0 and prints what it shows", async (name) => {
    const lines = await runExample(name);
    expect(lines.filter((line) => line.trim() !== "").length).toBeGreaterThan(0);
    for (const line of EXPECTED[name] ?? []) expect(lines).toContain(line);
  });

  it("orders streamed events: deltas as sent, tools, then the result last", async () => {
    const lines = await runExample("streaming.ts");
    const sent = lines.slice(
      lines.indexOf("-- streamed as sent"),
      lines.indexOf("-- buffered by afterLlmCall middleware"),
    );
    expect(sent).toEqual([
      "-- streamed as sent",
      'text_delta "Checking"',
      'text_delta "."',
      'tool_start weather {"city":"Lisbon"}',
      'tool_end weather -> {"city":"Lisbon","forecast":"sunny","celsius":21}',
      'text_delta "Lisbon i"',
      'text_delta "s sunny "',
      'text_delta "today, 2"',
      'text_delta "1 degree"',
      'text_delta "s."',
      'result completed: "Lisbon is sunny today, 21 degrees."',
    ]);
  });

  it("runs no handler of a parked run before its approval", async () => {
    const lines = await runExample("approvals.ts");
    const parkedAt = lines.indexOf("run 2: awaiting_approval");
    const deletedAt = lines.indexOf("  (handler) deleting old.log");
    expect(parkedAt).toBeGreaterThanOrEqual(0);
    expect(deletedAt).toBeGreaterThan(parkedAt);
    expect(lines.some((line) => line.endsWith("files still there: true"))).toBe(true);
    // Denied by the reviewer, by a `when` rule, or by the policy: those handlers never ran.
    expect(lines.filter((line) => line.startsWith("  (handler) "))).toEqual([
      "  (handler) deleting draft.txt",
      "  (handler) deleting old.log",
    ]);
  });
});

describe("the harnessx command (from source)", () => {
  const cli = (args: readonly string[]) =>
    run(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], {
      cwd: root,
      timeout: 15_000,
    });

  it("runs the embedded runtime demo by default: concurrent runs, one approved", async () => {
    const { stdout } = await cli([]);
    const lines = stdout.trim().split("\n");
    expect(lines[0]).toBe(
      'harnessx embedded runtime: 36 concurrent runs of agent "support", no servers',
    );
    expect(lines).toContain('  approving call_1 as "demo-operator"');
    expect(lines.some((line) => /^\[36\/36\] run \w{8} completed: Done: /.test(line))).toBe(true);
    expect(lines.some((line) => line.startsWith("36/36 runs completed in "))).toBe(true);
    expect(lines.at(-1)).toBe('runtime.list({ status: "completed" }) → 36 runs');
  });

  it("runs the direct-run tour: tools, hooks, streaming and an approval", async () => {
    const { stdout } = await cli(["tour"]);
    const lines = stdout.split("\n");
    expect(lines).toContain('  middleware: query "   harnessx   " -> "harnessx"');
    expect(lines).toContain('  hook TOOL_CALL_START search {"query":"harnessx"}');
    expect(lines).toContain("  hook TOOL_CALL_END   search -> Results for harnessx");
    expect(lines).toContain('  text_delta "Porto is"');
    expect(lines).toContain('  pending: delete_file {"path":"old.log"} (deleting needs a person)');
    expect(lines).toContain("  hook TOOL_CALL_END   delete_file -> deleted old.log");
    expect(lines.at(-2)).toMatch(/^Done\./);
  });

  it("prints its usage for --help", async () => {
    const { stdout } = await cli(["--help"]);
    expect(stdout).toMatch(/^Usage: harnessx \[command\]/);
    expect(stdout).toContain("demo");
  });

  it.each([
    { args: ["frob"] },
    { args: ["--frob"] },
    { args: ["demo", "extra"] },
    { args: ["worker"] },
    {
      args: ["worker", "--agents", "x.js", "--redis", "redis://127.0.0.1:1", "--concurrency", "0"],
    },
  ])("refuses $args with exit code 2 and a message", async ({ args }) => {
    const failure: unknown = await cli(args).then(
      () => new Error("expected a non-zero exit"),
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr).toMatch(/^harnessx: /);
  });
});
