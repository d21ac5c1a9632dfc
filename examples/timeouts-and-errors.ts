// Timeouts and error codes. A handler past its timeout has its signal aborted and the call gets
// an error result; the run goes on. A provider call past config.providerTimeoutMs fails the run
// with a ProviderError whose code is "timeout". Match failures on `error.code`; a thrown error's
// `fault` says whose it is (caller, model, tool, store or internal).
import { z } from "zod";
import {
  Agent,
  HarnessError,
  type Message,
  PermissionManager,
  type Provider,
  tool,
} from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

const slowLookup = tool({
  name: "slow_lookup",
  description: "Look a record up in a slow system.",
  input: z.object({ id: z.string() }),
  // Never answers, and ignores its signal: the run stops waiting for it after 50 ms.
  handler: () => new Promise<string>(() => {}),
  timeoutMs: 50,
});

const first = new Agent({
  provider: new ScriptedProvider([
    toolCallResponse([{ name: "slow_lookup", input: { id: "7" } }]),
    textResponse("Carried on without it."),
  ]),
  tools: [slowLookup],
});
const result = await first.run("Find record 7");
for (const message of result.messages) {
  for (const block of message.content) {
    if (block.type === "tool_result") console.log(`${block.toolCallId}: ${block.content}`);
  }
}
console.log(`run: ${result.status}: ${result.output}`);

// A model that never answers.
const silent: Provider = { name: "silent", complete: () => new Promise(() => {}) };
const second = new Agent({ provider: silent, config: { providerTimeoutMs: 50 } });
const timedOut = await second.run("Hello?");
if (timedOut.error?.code === "timeout") {
  console.log(`provider: ${timedOut.status}, ${timedOut.error.name} code=${timedOut.error.code}`);
}

// Tool-call ids are the model's data: "__proto__" works like any other id.
const asked = new Agent({
  provider: new ScriptedProvider([
    toolCallResponse([{ name: "slow_lookup", input: { id: "8" }, id: "__proto__" }]),
    textResponse("Skipped it."),
  ]),
  tools: [slowLookup],
  permissions: new PermissionManager({ rules: [{ tool: "slow_lookup", decision: "ask" }] }),
});
const parked = await asked.run("Find record 8", { runId: "run-8" });
const [waiting] = parked.pending;
console.log(`parked: ${waiting?.toolCallId}`);
const copy = JSON.parse(JSON.stringify(asked.parked("run-8")));
// A computed key defines an own "__proto__" entry (a literal `__proto__:` would set the prototype).
const decisions = waiting ? { [waiting.toolCallId]: "deny" as const } : {};
const resumed = await asked.resume(copy, { decisions });
console.log(`resumed: ${resumed.status}: ${resumed.output}`);

// Input that is not plain JSON data is refused with a code, never a RangeError.
const circular: Record<string, unknown> = {};
circular.self = circular;
const input = [
  { role: "user", content: [{ type: "tool_use", id: "c1", name: "x", input: circular }] },
] as Message[];
try {
  await first.run(input);
} catch (error) {
  if (HarnessError.isHarnessError(error)) {
    console.log(`input: ${error.name} code=${error.code} fault=${error.fault}`);
  }
}
