import type { ContentBlock, Message } from "../core/values.js";

// A rough, provider-neutral estimate: about four characters a token.
const CHARS_PER_TOKEN = 4;

const blockChars = (block: ContentBlock): number => {
  switch (block.type) {
    case "text":
    case "thinking":
      return block.text.length;
    case "tool_use":
      return block.name.length + JSON.stringify(block.input).length;
    case "tool_result":
      return block.content.length;
  }
};

// Messages are immutable values, so each one's estimate is computed once.
const estimates = new WeakMap<Message, number>();

export const estimateTokens = (message: Message): number => {
  let tokens = estimates.get(message);
  if (tokens === undefined) {
    const chars = message.content.reduce((sum, block) => sum + blockChars(block), 0);
    tokens = Math.ceil(chars / CHARS_PER_TOKEN) + 4;
    estimates.set(message, tokens);
  }
  return tokens;
};

// A run's log is append-only: the estimate of its first `count` messages grows by the new
// messages' alone, instead of being summed over the whole conversation at every compose.
const logged = new WeakMap<readonly Message[], { count: number; tokens: number }>();

/** The token estimate of the first `count` messages of a run's append-only conversation. */
export function conversationTokens(conversation: readonly Message[], count: number): number {
  let known = logged.get(conversation);
  if (known === undefined || known.count > count) {
    known = { count: 0, tokens: 0 };
    logged.set(conversation, known);
  }
  for (let index = known.count; index < count; index++) {
    known.tokens += estimateTokens(conversation[index] as Message);
  }
  known.count = count;
  return known.tokens;
}

/** Splits messages into units that must stay together: an assistant tool request and its results. */
function units(messages: readonly Message[]): Message[][] {
  const grouped: Message[][] = [];
  for (const message of messages) {
    const previous = grouped.at(-1);
    if (message.role === "tool" && previous !== undefined) previous.push(message);
    else grouped.push([message]);
  }
  return grouped;
}

/**
 * The conversation as sent to the model: the first message (the task) and as many of the most
 * recent units as fit in `budget` tokens. A tool request is never separated from its results.
 * The most recent unit is always kept, even over budget. `total`: the messages' estimate, where
 * the caller keeps it.
 */
export function trimContext(
  messages: Message[],
  budget: number,
  total = messages.reduce((sum, message) => sum + estimateTokens(message), 0),
): Message[] {
  if (total <= budget || messages.length <= 2) return messages;

  const [first, ...rest] = units(messages);
  if (first === undefined) return messages;
  let used = first.reduce((sum, message) => sum + estimateTokens(message), 0);
  const kept: Message[][] = [];
  for (let index = rest.length - 1; index >= 0; index--) {
    const unit = rest[index] as Message[];
    const cost = unit.reduce((sum, message) => sum + estimateTokens(message), 0);
    if (kept.length > 0 && used + cost > budget) break;
    kept.unshift(unit);
    used += cost;
  }
  return [...first, ...kept.flat()];
}
