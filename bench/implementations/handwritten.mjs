// A hand-written minimal agent loop doing the same work as harnessx on this workload: call the
// model, pass each stage through the four middleware, call the three hooks, run the handler.
// No state machine, no validation, no permission checks, no contract checks.
import {
  createMiddleware,
  createProvider,
  forgetRequests,
  newId,
  noopTool,
  observeHook,
} from "../workload.mjs";

export const name = "handwritten";

const addUsage = (total, usage) => ({
  inputTokens: total.inputTokens + usage.inputTokens,
  outputTokens: total.outputTokens + usage.outputTokens,
  cacheReadTokens: total.cacheReadTokens + usage.cacheReadTokens,
  cacheWriteTokens: total.cacheWriteTokens + usage.cacheWriteTokens,
});

const hook = async (event, data) => {
  await observeHook({ event, agent: null, data, timestamp: Date.now() });
};

export function create(toolIterations) {
  const provider = createProvider(toolIterations);
  const middleware = createMiddleware();
  const tools = [
    { name: noopTool.name, description: noopTool.description, inputSchema: noopTool.inputSchema },
  ];
  const signal = new AbortController().signal;

  async function run(input) {
    const runId = newId();
    const sessionId = newId();
    const messages = [{ role: "user", content: [{ type: "text", text: input }] }];
    let usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    let iterations = 0;
    for (;;) {
      let sentMessages = messages;
      let sentTools = tools;
      for (const each of middleware) {
        [sentMessages, sentTools] = await each.beforeLlmCall(sentMessages, sentTools);
      }
      const request = {
        system: "",
        messages: sentMessages,
        tools: sentTools,
        model: "default",
        maxTokens: 4096,
        temperature: 1,
        stream: false,
        prefixKey: null,
      };
      await hook("llm:request", { runId, messageCount: request.messages.length });
      iterations++;
      let response = await provider.complete(request, { signal });
      for (const each of middleware) response = await each.afterLlmCall(response);
      messages.push({ role: "assistant", content: response.content });
      usage = addUsage(usage, response.usage);
      if (response.toolCalls.length === 0) {
        const output = response.content
          .filter((block) => block.type === "text")
          .map((block) => block.text)
          .join("");
        return {
          runId,
          sessionId,
          status: "completed",
          output,
          error: null,
          pending: [],
          usage,
          iterations,
          messages,
        };
      }
      const results = [];
      for (const requested of response.toolCalls) {
        let call = requested;
        for (const each of middleware) call = await each.beforeToolExecution(call);
        await hook("tool:start", { runId, toolCall: call });
        const output = await noopTool.handler(call.input, { signal, runId, toolCallId: call.id });
        let result = { toolCallId: call.id, content: String(output), isError: false };
        for (const each of middleware) result = await each.afterToolExecution(result);
        await hook("tool:end", { runId, toolCall: call, result });
        results.push(result);
      }
      messages.push({
        role: "tool",
        content: results.map((result) => ({ type: "tool_result", ...result })),
      });
    }
  }

  return {
    async run() {
      const result = await run("Run the benchmark.");
      forgetRequests(provider);
      return result;
    },
  };
}
