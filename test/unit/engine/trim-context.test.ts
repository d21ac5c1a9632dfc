import { describe, expect, it } from "vitest";
import {
  conversationTokens,
  estimateTokens,
  trimContext,
} from "../../../src/engine/trim-context.js";
import type { Message } from "../../../src/index.js";

const text = (role: "user" | "assistant", body: string): Message => ({
  role,
  content: [{ type: "text", text: body }],
});
const toolRequest = (id: string): Message => ({
  role: "assistant",
  content: [
    { type: "text", text: `Looking up ${id}.` },
    { type: "tool_use", id, name: "search", input: { query: `query for ${id}` } },
  ],
});
const toolResults = (id: string, body = "x".repeat(40)): Message => ({
  role: "tool",
  content: [{ type: "tool_result", toolCallId: id, content: body, isError: false }],
});

const cost = (messages: readonly Message[]): number =>
  messages.reduce((sum, message) => sum + estimateTokens(message), 0);

/** A task, then turns: plain replies and tool requests each followed by their results. */
const conversation = (): Message[] => [
  text("user", "Find the three cheapest flights to Lisbon and book the best one."),
  toolRequest("call-1"),
  toolResults("call-1"),
  text("assistant", "I found some flights; let me check prices."),
  text("user", "Prefer morning flights."),
  toolRequest("call-2"),
  toolResults("call-2", "y".repeat(200)),
  toolResults("call-2b", "z".repeat(10)),
  toolRequest("call-3"),
  toolResults("call-3"),
  text("assistant", "Booked the 08:15 flight."),
];

/** Checks what every trimmed conversation must satisfy, whatever the budget. */
function expectWellFormed(input: readonly Message[], output: readonly Message[], budget: number) {
  // The task stays first.
  expect(output[0]).toBe(input[0]);
  // The rest is the most recent part of the conversation, unchanged and in order.
  const tail = output.slice(1);
  expect(tail).toEqual(input.slice(input.length - tail.length));
  for (const [index, message] of tail.entries()) {
    expect(message).toBe(input[input.length - tail.length + index]);
  }
  // Nothing is lost when it fits.
  if (cost(input) <= budget) expect(output).toBe(input);
  // A tool message is never separated from the message before it (the tool request).
  for (const [index, message] of output.entries()) {
    if (message.role !== "tool") continue;
    const inputIndex = input.indexOf(message);
    expect(index).toBeGreaterThan(0);
    expect(output[index - 1]).toBe(input[inputIndex - 1]);
  }
  // The most recent message is always kept.
  expect(output.at(-1)).toBe(input.at(-1));
}

describe("estimateTokens", () => {
  it("counts about four characters a token plus a per-message overhead", () => {
    expect(estimateTokens(text("user", ""))).toBe(4);
    expect(estimateTokens(text("user", "x".repeat(40)))).toBe(14);
    expect(estimateTokens(text("user", "x".repeat(41)))).toBe(15);
  });

  it("counts tool requests by name and input, and tool results by content", () => {
    const request: Message = {
      role: "assistant",
      content: [{ type: "tool_use", id: "c", name: "abcd", input: { q: "1234" } }],
    };
    // "abcd" (4) + '{"q":"1234"}' (12) = 16 characters.
    expect(estimateTokens(request)).toBe(8);
    expect(estimateTokens(toolResults("c", "x".repeat(8)))).toBe(6);
  });

  it("adds up every block of a message", () => {
    const message: Message = {
      role: "assistant",
      content: [
        { type: "thinking", text: "x".repeat(8) },
        { type: "text", text: "y".repeat(8) },
      ],
    };
    expect(estimateTokens(message)).toBe(8);
  });
});

describe("trimContext", () => {
  it("returns the input itself when it fits the budget", () => {
    const messages = conversation();
    expect(trimContext(messages, cost(messages))).toBe(messages);
    expect(trimContext(messages, Number.MAX_SAFE_INTEGER)).toBe(messages);
  });

  it("returns two messages or fewer unchanged, even over budget", () => {
    const two = [text("user", "x".repeat(400)), text("assistant", "y".repeat(400))];
    expect(trimContext(two, 1)).toBe(two);
    const none: Message[] = [];
    expect(trimContext(none, 0)).toBe(none);
  });

  it("keeps the first message and the most recent messages that fit", () => {
    const messages = [
      text("user", "task"),
      text("assistant", "a".repeat(40)),
      text("user", "b".repeat(40)),
      text("assistant", "c".repeat(40)),
      text("user", "d".repeat(40)),
    ];
    const first = messages[0] as Message;
    const budget = cost([first, ...messages.slice(3)]);
    expect(trimContext(messages, budget)).toEqual([first, ...messages.slice(3)]);
    // One token short of the next older message still leaves it out.
    expect(trimContext(messages, budget + estimateTokens(messages[2] as Message) - 1)).toEqual([
      first,
      ...messages.slice(3),
    ]);
    expect(trimContext(messages, budget + estimateTokens(messages[2] as Message))).toEqual([
      first,
      ...messages.slice(2),
    ]);
  });

  it("drops a tool request together with its results rather than splitting them", () => {
    const messages = conversation();
    const [request, results, reply] = messages.slice(-3) as [Message, Message, Message];
    expect(results.role).toBe("tool");
    // Room for the final reply and the tool result before it, but not for its request.
    const budget = cost([messages[0] as Message, results, reply]);
    expect(trimContext(messages, budget)).toEqual([messages[0], reply]);
    // With room for the request too, the pair is kept whole.
    expect(trimContext(messages, budget + estimateTokens(request))).toEqual([
      messages[0],
      request,
      results,
      reply,
    ]);
  });

  it("keeps a tool request with all of its consecutive tool messages", () => {
    const messages = conversation();
    // The unit of call-2: its request and both tool messages after it.
    const unit = messages.slice(5, 8);
    const after = messages.slice(8);
    const budget = cost([messages[0] as Message, ...unit, ...after]);
    expect(trimContext(messages, budget)).toEqual([messages[0], ...unit, ...after]);
    expect(trimContext(messages, budget - 1)).toEqual([messages[0], ...after]);
  });

  it("keeps the most recent unit even when it alone exceeds the budget", () => {
    const messages = [
      text("user", "task"),
      text("assistant", "old"),
      toolRequest("call-9"),
      toolResults("call-9", "r".repeat(4000)),
    ];
    expect(trimContext(messages, 10)).toEqual([messages[0], messages[2], messages[3]]);
  });

  it("keeps a first message that alone exceeds the budget", () => {
    const messages = [
      text("user", "t".repeat(4000)),
      text("assistant", "middle"),
      text("user", "latest"),
    ];
    expect(trimContext(messages, 5)).toEqual([messages[0], messages[2]]);
  });

  it("is well formed for every budget", () => {
    const messages = conversation();
    const before = structuredClone(messages);
    for (let budget = 0; budget <= cost(messages) + 1; budget++) {
      const trimmed = trimContext(messages, budget);
      expectWellFormed(messages, trimmed, budget);
      // Over budget only when nothing but the task and the final reply (the last unit) is left.
      if (trimmed.length > 2) expect(cost(trimmed)).toBeLessThanOrEqual(budget);
    }
    // The input is never mutated.
    expect(messages).toEqual(before);
  });
});

describe("conversationTokens", () => {
  it("sums the first count messages of a log as it grows, each new message added once", () => {
    const all = conversation();
    const log: Message[] = all.slice(0, 2);
    expect(conversationTokens(log, 2)).toBe(cost(all.slice(0, 2)));
    log.push(...all.slice(2, 5));
    expect(conversationTokens(log, 4)).toBe(cost(all.slice(0, 4)));
    expect(conversationTokens(log, 5)).toBe(cost(all.slice(0, 5)));
    log.push(...all.slice(5));
    expect(conversationTokens(log, all.length)).toBe(cost(all));
  });

  it("counts again from the start when asked for fewer messages than it counted", () => {
    const log = conversation();
    expect(conversationTokens(log, log.length)).toBe(cost(log));
    expect(conversationTokens(log, 3)).toBe(cost(log.slice(0, 3)));
    expect(conversationTokens(log, 1)).toBe(cost(log.slice(0, 1)));
  });

  it("keeps the estimate of each log apart", () => {
    const one = conversation();
    const other = conversation().slice(0, 3);
    expect(conversationTokens(one, one.length)).toBe(cost(one));
    expect(conversationTokens(other, 3)).toBe(cost(other));
    expect(conversationTokens(one, one.length)).toBe(cost(one));
  });
});
