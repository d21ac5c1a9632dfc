import { setTimeout as delay } from "node:timers/promises";
import { z } from "zod";
import {
  Agent,
  type AgentOptions,
  HookEvent,
  Middleware,
  PermissionManager,
  type Provider,
  type ProviderRequest,
  type ProviderStreamEvent,
  type RunEvent,
  type RunResult,
  type ToolCall,
  tool,
} from "../index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../providers/scripted.js";

/** Where the demo writes its lines. */
export type DemoOutput = (line: string) => void;

export interface DemoOptions {
  /** @defaultValue console.log */
  output?: DemoOutput;
  /** Pause between streamed deltas, so they visibly arrive one by one. @defaultValue 40 */
  deltaDelayMs?: number;
  /** A real model to run the tour on. @defaultValue the scripted model */
  provider?: Provider;
}

const search = tool({
  name: "search",
  description: "Return a fixture search result for the requested query.",
  input: z.object({ query: z.string() }),
  handler: async ({ query }) => `Results for ${query}`,
});

const weather = tool({
  name: "weather",
  description: "Return fixture weather for a city.",
  input: z.object({ city: z.string() }),
  handler: async ({ city }) => ({ city, forecast: "sunny", celsius: 21 }),
});

const deleteFile = tool({
  name: "delete_file",
  description: "Delete a file (a fixture: nothing is touched).",
  input: z.object({ path: z.string() }),
  handler: async ({ path }) => `deleted ${path}`,
});

/** Streams a scripted provider's events with a pause between them. */
function paced(provider: ScriptedProvider, delayMs: number): Provider {
  return {
    name: provider.name,
    complete: (request, options) => provider.complete(request, options),
    async *stream(request: ProviderRequest, options): AsyncIterable<ProviderStreamEvent> {
      for await (const event of provider.stream(request, options)) {
        if (event.type !== "response" && delayMs > 0) await delay(delayMs);
        yield event;
      }
    },
  };
}

const summary = (result: RunResult): string =>
  `${result.status} after ${result.iterations} model call(s)` +
  (result.output === null ? "" : `: ${JSON.stringify(result.output)}`);

/** An agent whose tool hooks print as they fire. */
function agentWith(output: DemoOutput, options: AgentOptions & { provider: Provider }): Agent {
  const agent = new Agent(options);
  agent.hooks.on(HookEvent.TOOL_CALL_START, ({ data }) => {
    output(`  hook TOOL_CALL_START ${data.toolCall.name} ${JSON.stringify(data.toolCall.input)}`);
  });
  agent.hooks.on(HookEvent.TOOL_CALL_END, ({ data }) => {
    const flag = data.result.isError ? " (error)" : "";
    output(`  hook TOOL_CALL_END   ${data.toolCall.name} -> ${data.result.content}${flag}`);
  });
  return agent;
}

/**
 * Direct runs with a scripted model, printed as they happen: tool calls with middleware and
 * hooks, a streamed run, and a run that parks for approval and is approved.
 */
export async function runDemo(options: DemoOptions = {}): Promise<void> {
  const output = options.output ?? ((line: string) => console.log(line));
  const deltaDelayMs = options.deltaDelayMs ?? 40;
  const real = options.provider;
  output(
    real === undefined
      ? "harnessx demo: direct runs with a scripted model (no API key, no Redis)"
      : `harnessx demo: direct runs with the model of provider "${real.name}" (no Redis)`,
  );

  output("");
  output("1. Two tool calls; NormalizeSearch middleware trims the search query");
  class NormalizeSearch extends Middleware {
    override async beforeToolExecution(call: ToolCall): Promise<ToolCall> {
      const query = call.input.query;
      if (call.name !== "search" || typeof query !== "string" || query === query.trim())
        return call;
      output(`  middleware: query ${JSON.stringify(query)} -> ${JSON.stringify(query.trim())}`);
      return { ...call, input: { ...call.input, query: query.trim() } };
    }
  }
  const toolsAgent = agentWith(output, {
    provider:
      real ??
      new ScriptedProvider([
        toolCallResponse([
          { name: "search", input: { query: "   harnessx   " } },
          { name: "weather", input: { city: "Lisbon" } },
        ]),
        textResponse("harnessx is an agent harness, and Lisbon is sunny."),
      ]),
    tools: [search, weather],
    middleware: [new NormalizeSearch()],
  });
  output(`  result: ${summary(await toolsAgent.run("What is harnessx? And the weather?"))}`);

  output("");
  output("2. A streamed run: text deltas arrive as the model sends them");
  const streamingAgent = agentWith(output, {
    provider:
      real ??
      paced(
        new ScriptedProvider(
          [
            toolCallResponse([{ name: "weather", input: { city: "Porto" } }], {
              text: "Let me check.",
            }),
            textResponse("Porto is sunny today, 21 degrees."),
          ],
          { chunkSize: 8 },
        ),
        deltaDelayMs,
      ),
    tools: [weather],
  });
  for await (const event of streamingAgent.runStream("Weather in Porto?")) {
    output(describeEvent(event));
  }

  output("");
  output('3. Approvals: the policy asks before any "delete_*" call');
  const permissions = new PermissionManager({
    default: "allow",
    rules: [{ tool: "delete_*", decision: "ask", reason: "deleting needs a person" }],
  });
  const approvalAgent = agentWith(output, {
    provider:
      real ??
      new ScriptedProvider([
        toolCallResponse([{ name: "delete_file", input: { path: "old.log" } }]),
        textResponse("old.log is deleted."),
      ]),
    tools: [deleteFile],
    permissions,
  });
  const parked = await approvalAgent.run("Delete old.log");
  output(`  result: ${summary(parked)}`);
  for (const pending of parked.pending) {
    output(`  pending: ${pending.name} ${JSON.stringify(pending.input)} (${pending.reason})`);
  }
  const decisions = Object.fromEntries(
    parked.pending.map((pending) => [
      pending.toolCallId,
      { decision: "allow" as const, reason: "an old log", by: "demo-user" },
    ]),
  );
  // A real model may answer without asking to delete anything: then there is nothing to approve.
  if (parked.status === "awaiting_approval") {
    output(`  approving ${parked.pending.length} call(s) as demo-user, then resuming`);
    output(`  result: ${summary(await approvalAgent.resume(parked.runId, { decisions }))}`);
  }

  output("");
  output("Done. The README's tour and the repository's examples/ folder show more.");
}

function describeEvent(event: RunEvent): string {
  switch (event.type) {
    case "text_delta":
    case "thinking_delta":
      return `  ${event.type} ${JSON.stringify(event.text)}`;
    case "tool_start":
      return `  event tool_start ${event.toolCall.name}`;
    case "tool_end":
      return `  event tool_end ${event.toolCall.name}`;
    case "approval_required":
      return `  event approval_required (${event.pending.length} call(s))`;
    case "child_started":
    case "child_finished":
      return `  event ${event.type} ${event.childRunId} (${event.agent})`;
    case "result":
      return `  event result: ${summary(event.result)}`;
  }
}
