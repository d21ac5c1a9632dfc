import { pino } from "pino";
import { describe, expect, it } from "vitest";
import {
  Agent,
  InputInvalidError,
  MAX_JSON_DEPTH,
  type Message,
  type Provider,
  type RunEvent,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";
import { harnessRejection } from "../../support/rejection.js";

const makeAgent = (provider: Provider = new ScriptedProvider([textResponse("ok")])): Agent =>
  new Agent({ provider, logger: pino({ level: "silent" }) });

/** A value nested `depth` arrays deep, built without recursion. */
function nested(depth: number): unknown {
  let value: unknown = "leaf";
  for (let level = 0; level < depth; level++) value = [value];
  return value;
}

/** A conversation whose one tool_use block carries `input`. */
const withToolInput = (input: unknown): Message[] =>
  [
    { role: "user", content: [{ type: "text", text: "hi" }] },
    {
      role: "assistant",
      content: [{ type: "tool_use", id: "call_1", name: "search", input }],
    },
  ] as Message[];

const cyclic = (): Record<string, unknown> => {
  const value: Record<string, unknown> = {};
  value.self = value;
  return value;
};

describe("agent.run refuses input that is not plain JSON messages", () => {
  it.each<[string, unknown, RegExp]>([
    ["nested past the limit", { deep: nested(MAX_JSON_DEPTH + 5) }, /nests deeper than 100 levels/],
    ["nested deep enough to overflow the stack", { deep: nested(300_000) }, /nests deeper/],
    ["circular", cyclic(), /refers to itself/],
    ["holding a bigint", { amount: 10n }, /contains a bigint/],
    ["holding a function", { callback: () => 1 }, /contains a function/],
    ["holding a Date", { when: new Date(0) }, /contains a Date/],
  ])("input %s: an InputInvalidError, never a RangeError", async (_label, input, problem) => {
    const error = await harnessRejection(makeAgent().run(withToolInput(input)));
    expect(error).toBeInstanceOf(InputInvalidError);
    expect(error.code).toBe("input_invalid");
    expect(error.message).toMatch(/^Invalid run input: it /);
    expect(error.message).toMatch(problem);
  });

  it("messages of the wrong shape: an InputInvalidError naming the path", async () => {
    const error = await harnessRejection(
      makeAgent().run([{ role: "robot", content: [] }] as unknown as Message[]),
    );
    expect(error.code).toBe("input_invalid");
    expect(error.message).toContain("0.role");
  });

  it("an empty conversation is refused", async () => {
    const error = await harnessRejection(makeAgent().run([]));
    expect(error.code).toBe("input_invalid");
  });

  it("runStream refuses it the same way", async () => {
    const events: RunEvent[] = [];
    const error = await harnessRejection(
      (async () => {
        for await (const event of makeAgent().runStream(withToolInput(cyclic()))) {
          events.push(event);
        }
      })(),
    );
    expect(error.code).toBe("input_invalid");
    expect(events).toEqual([]);
  });

  it("accepts nesting up to the limit and a __proto__ key parsed from JSON", async () => {
    const input = {
      deep: nested(MAX_JSON_DEPTH - 10), // the conversation around it adds 5 levels
      ...(JSON.parse('{"__proto__": {"a": 1}}') as object),
    };
    const result = await makeAgent().run(withToolInput(input));
    expect(result.status).toBe("completed");
  });
});

describe("a provider response too deep to store", () => {
  it("fails the run with a ProviderError instead of overflowing later", async () => {
    const provider = new ScriptedProvider([
      toolCallResponse([
        { name: "search", input: { deep: nested(MAX_JSON_DEPTH + 1) as Record<string, unknown> } },
      ]),
    ]);
    const result = await makeAgent(provider).run("go");
    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({
      name: "ProviderError",
      code: "provider_failed",
      phase: "provider",
    });
    expect(result.error?.message).toContain("nests deeper than 100 levels");
  });

  // Response (1) → toolCalls or content (2) → call or block (3) → input (4) → `deep`'s arrays.
  const responseWithInput = (deep: unknown) =>
    new ScriptedProvider([
      toolCallResponse([{ name: "search", input: { deep } as Record<string, unknown> }]),
      textResponse("done"),
    ]);

  it("counts the levels around a tool input: 100 in all is accepted", async () => {
    const result = await makeAgent(responseWithInput(nested(MAX_JSON_DEPTH - 4))).run("go");
    expect(result.status).toBe("completed");
  });

  it("counts the levels around a tool input: 101 in all fails the run", async () => {
    const result = await makeAgent(responseWithInput(nested(MAX_JSON_DEPTH - 3))).run("go");
    expect(result.status).toBe("failed");
    expect(result.error?.message).toContain("nests deeper than 100 levels");
  });

  it("fails the run on a tool input that is not JSON data", async () => {
    const result = await makeAgent(responseWithInput(new Date(0))).run("go");
    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({ name: "ProviderError", phase: "provider" });
    expect(result.error?.message).toContain("contains a Date, which is not JSON data");
  });
});
