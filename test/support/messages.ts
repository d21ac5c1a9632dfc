import type { Message } from "../../src/index.js";

/** The tool_result blocks of a conversation, in order. */
export function toolResults(messages: readonly Message[]) {
  return messages.flatMap((message) =>
    message.content.flatMap((block) => (block.type === "tool_result" ? [block] : [])),
  );
}
