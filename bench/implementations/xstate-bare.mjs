// A bare two-state XState v5 loop: `provider` and `dispatch`, each invoking a `fromPromise`
// actor. No middleware, no hooks, no validation: the floor of an XState-driven agent loop.
import { assign, createActor, fromPromise, setup, toPromise } from "xstate";
import { createProvider, forgetRequests, newId, noopTool } from "../workload.mjs";

export const name = "xstate-bare";

const addUsage = (total, usage) => ({
  inputTokens: total.inputTokens + usage.inputTokens,
  outputTokens: total.outputTokens + usage.outputTokens,
  cacheReadTokens: total.cacheReadTokens + usage.cacheReadTokens,
  cacheWriteTokens: total.cacheWriteTokens + usage.cacheWriteTokens,
});

const tools = [
  { name: noopTool.name, description: noopTool.description, inputSchema: noopTool.inputSchema },
];

const loopMachine = setup({
  actors: {
    callProvider: fromPromise(({ input }) =>
      input.provider.complete(
        {
          system: "",
          messages: input.messages,
          tools,
          model: "default",
          maxTokens: 4096,
          temperature: 1,
          stream: false,
          prefixKey: null,
        },
        { signal: input.signal },
      ),
    ),
    dispatchTools: fromPromise(async ({ input }) => {
      const results = [];
      for (const call of input.toolCalls) {
        const output = await noopTool.handler(call.input, {
          signal: input.signal,
          runId: input.runId,
          toolCallId: call.id,
        });
        results.push({ toolCallId: call.id, content: String(output), isError: false });
      }
      return results;
    }),
  },
  guards: {
    requestsTools: ({ event }) => event.output.toolCalls.length > 0,
  },
}).createMachine({
  id: "bare",
  context: ({ input }) => ({
    runId: input.runId,
    sessionId: input.sessionId,
    provider: input.provider,
    signal: input.signal,
    messages: input.messages,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    iterations: 0,
    toolCalls: [],
    output: null,
    status: "running",
  }),
  initial: "provider",
  states: {
    provider: {
      entry: assign({ iterations: ({ context }) => context.iterations + 1 }),
      invoke: {
        src: "callProvider",
        input: ({ context }) => ({
          provider: context.provider,
          messages: context.messages,
          signal: context.signal,
        }),
        onDone: [
          {
            guard: "requestsTools",
            target: "dispatch",
            actions: assign({
              messages: ({ context, event }) => [
                ...context.messages,
                { role: "assistant", content: event.output.content },
              ],
              usage: ({ context, event }) => addUsage(context.usage, event.output.usage),
              toolCalls: ({ event }) => event.output.toolCalls,
            }),
          },
          {
            target: "done",
            actions: assign({
              status: "completed",
              messages: ({ context, event }) => [
                ...context.messages,
                { role: "assistant", content: event.output.content },
              ],
              usage: ({ context, event }) => addUsage(context.usage, event.output.usage),
              output: ({ event }) =>
                event.output.content
                  .filter((block) => block.type === "text")
                  .map((block) => block.text)
                  .join(""),
            }),
          },
        ],
        onError: { target: "failed", actions: assign({ status: "failed" }) },
      },
    },
    dispatch: {
      invoke: {
        src: "dispatchTools",
        input: ({ context }) => ({
          toolCalls: context.toolCalls,
          runId: context.runId,
          signal: context.signal,
        }),
        onDone: {
          target: "provider",
          actions: assign({
            messages: ({ context, event }) => [
              ...context.messages,
              {
                role: "tool",
                content: event.output.map((result) => ({ type: "tool_result", ...result })),
              },
            ],
            toolCalls: [],
          }),
        },
        onError: { target: "failed", actions: assign({ status: "failed" }) },
      },
    },
    done: { type: "final" },
    failed: { type: "final" },
  },
  output: ({ context }) => ({
    runId: context.runId,
    sessionId: context.sessionId,
    status: context.status,
    output: context.output,
    error: null,
    pending: [],
    usage: context.usage,
    iterations: context.iterations,
    messages: context.messages,
  }),
});

export function create(toolIterations) {
  const provider = createProvider(toolIterations);
  const signal = new AbortController().signal;
  return {
    async run() {
      const actor = createActor(loopMachine, {
        input: {
          runId: newId(),
          sessionId: newId(),
          provider,
          signal,
          messages: [{ role: "user", content: [{ type: "text", text: "Run the benchmark." }] }],
        },
      });
      actor.start();
      const result = await toPromise(actor);
      forgetRequests(provider);
      return result;
    },
  };
}
