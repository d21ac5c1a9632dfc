import { z } from "zod";
import type { Provider, ProviderRequest } from "../core/provider.js";
import type { Message, ProviderResponse } from "../core/values.js";
import { Agent } from "../engine/agent.js";
import { PermissionManager } from "../permissions/permission-manager.js";
import { textResponse, toolCallResponse } from "../providers/scripted.js";
import { tool } from "../tools/tool.js";

// The agents of the embedded demo (and of `harnessx worker --agents` examples): a support agent
// whose model is scripted by turn, so any number of concurrent runs share one provider. Below the
// CLI: `harnessx/testing` re-exports it and the CLI's demos use it.

const search = tool({
  name: "search",
  description: "Search the order database (a fixture).",
  input: z.object({ query: z.string() }),
  handler: async ({ query }) => `Order ${query.replace(/\D/g, "") || "?"}: shipped yesterday`,
});

const refund = tool({
  name: "refund_order",
  description: "Refund an order (a fixture: no money moves).",
  input: z.object({ orderId: z.string() }),
  handler: async ({ orderId }) => `Refunded order ${orderId}`,
});

const lastText = (messages: readonly Message[]): string => {
  const first = messages.find((message) => message.role === "user");
  const block = first?.content.find((each) => each.type === "text");
  return block?.type === "text" ? block.text : "";
};

/** A model that asks for one tool on the first turn and answers with its result on the second. */
export const supportModel: Provider = {
  name: "scripted-support",
  async complete(request: ProviderRequest): Promise<ProviderResponse> {
    const last = request.messages.at(-1);
    const toolResult = last?.role === "tool" ? last.content[0] : undefined;
    if (toolResult?.type === "tool_result") return textResponse(`Done: ${toolResult.content}.`);
    const question = lastText(request.messages);
    const orderId = question.replace(/\D/g, "") || "0";
    return question.startsWith("Refund")
      ? toolCallResponse([{ name: "refund_order", input: { orderId } }])
      : toolCallResponse([{ name: "search", input: { query: `order ${orderId}` } }]);
  },
};

/** The demo's support agent: searches freely, asks a person before refunding. */
export function supportAgent(
  options: { logger?: Agent["logger"]; provider?: Provider } = {},
): Agent {
  return new Agent({
    provider: options.provider ?? supportModel,
    config: { name: "support", systemPrompt: "You answer questions about orders." },
    tools: [search, refund],
    permissions: new PermissionManager({
      rules: [{ tool: "refund_*", decision: "ask", reason: "refunds need a person" }],
    }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
}
