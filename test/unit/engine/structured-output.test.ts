import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { Agent, ConfigError, HookEvent, PermissionManager, tool } from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";
import { silent } from "../../support/silent.js";

const Answer = z.object({ title: z.string(), words: z.number().int() });

const writer = (provider: ScriptedProvider, outputRetries?: number) =>
  new Agent({
    provider,
    logger: silent,
    config: {
      name: "writer",
      output: Answer,
      ...(outputRetries === undefined ? {} : { outputRetries }),
    },
  });

describe("structured output (config.output)", () => {
  it("parses a matching final answer into RunResult.output, typed by the schema", async () => {
    const provider = new ScriptedProvider([textResponse('{"title":"Cats","words":3}')]);
    const result = await writer(provider).run("Write about cats");
    expect(result.status).toBe("completed");
    expect(result.output).toEqual({ title: "Cats", words: 3 });
    expectTypeOf(result.output).toEqualTypeOf<{ title: string; words: number } | null>();
    provider.assertComplete();
  });

  it("asks for the schema on every request (request.output, the JSON schema of config.output)", async () => {
    const provider = new ScriptedProvider([textResponse('{"title":"A","words":1}')]);
    await writer(provider).run("go");
    const [request] = provider.requests;
    expect(request?.output?.name).toBe("final_output");
    expect(request?.output?.schema).toMatchObject({
      type: "object",
      properties: { title: { type: "string" }, words: { type: "integer" } },
      required: ["title", "words"],
    });
  });

  it("accepts an answer in a Markdown code fence", async () => {
    const provider = new ScriptedProvider([textResponse('```json\n{"title":"F","words":2}\n```')]);
    expect((await writer(provider).run("go")).output).toEqual({ title: "F", words: 2 });
  });

  it("sends an invalid answer back with what failed, and takes the next valid one", async () => {
    const provider = new ScriptedProvider([
      textResponse('{"title":"Cats","words":"three"}'),
      textResponse("not json at all"),
      textResponse('{"title":"Cats","words":3}'),
    ]);
    const result = await writer(provider).run("Write about cats");
    expect(result.status).toBe("completed");
    expect(result.output).toEqual({ title: "Cats", words: 3 });
    expect(result.iterations).toBe(3);
    const second = provider.requests[1];
    const feedback = second?.messages.at(-1);
    expect(feedback?.role).toBe("user");
    expect(JSON.stringify(feedback?.content)).toContain("words: Invalid input: expected number");
    const third = provider.requests[2]?.messages.at(-1);
    expect(JSON.stringify(third?.content)).toContain("not valid JSON");
  });

  it("fails with output_invalid once outputRetries answers were sent back", async () => {
    const provider = new ScriptedProvider([
      textResponse('{"title":1}'),
      textResponse('{"title":2}'),
    ]);
    const ended: string[] = [];
    const agent = writer(provider, 1);
    agent.hooks.on(HookEvent.AGENT_END, (ctx) => {
      ended.push(ctx.data.result.error?.code ?? "none");
    });
    const result = await agent.run("go");
    expect(result.status).toBe("failed");
    expect(result.output).toBeNull();
    expect(result.error).toMatchObject({
      name: "OutputInvalidError",
      code: "output_invalid",
      phase: "afterLlm",
    });
    expect(result.error?.message).toContain("2 attempts");
    // The last answer is kept in the conversation, for whoever looks into the failure.
    expect(result.messages.at(-1)).toEqual({
      role: "assistant",
      content: [{ type: "text", text: '{"title":2}' }],
    });
    expect(ended).toEqual(["output_invalid"]);
    provider.assertComplete();
  });

  it("with outputRetries 0 fails on the first invalid answer", async () => {
    const provider = new ScriptedProvider([textResponse("{}")]);
    const result = await writer(provider, 0).run("go");
    expect(result.error?.code).toBe("output_invalid");
    expect(result.iterations).toBe(1);
  });

  it("uses tools first: only a response without tool calls is the final answer", async () => {
    const lookup = tool({
      name: "count",
      description: "Counts words.",
      input: z.object({ text: z.string() }),
      handler: async ({ text }) => String(text.split(" ").length),
    });
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "count", input: { text: "a b c" } }]),
      textResponse('{"title":"Counted","words":3}'),
    ]);
    const agent = new Agent({
      provider,
      tools: [lookup],
      logger: silent,
      permissions: new PermissionManager({ default: "allow" }),
      config: { output: Answer },
    });
    const result = await agent.run("count");
    expect(result.output).toEqual({ title: "Counted", words: 3 });
  });

  it("streams the parsed value as the result event's output", async () => {
    const provider = new ScriptedProvider([textResponse('{"title":"S","words":1}')]);
    const events = [];
    for await (const event of writer(provider).runStream("go")) events.push(event);
    const last = events.at(-1);
    expect(last?.type === "result" ? last.result.output : undefined).toEqual({
      title: "S",
      words: 1,
    });
  });

  it("refuses a config.output that is not a zod schema, or one JSON Schema cannot express", () => {
    expect(
      () => new Agent({ config: { output: { parse: () => 1 } as unknown as z.ZodType } }),
    ).toThrow(ConfigError);
    expect(() => new Agent({ config: { output: z.bigint() } })).toThrow(
      /config.output cannot be expressed as JSON Schema/,
    );
  });

  it("fails with a clear error when the schema's output is no JSON value", async () => {
    const provider = new ScriptedProvider([textResponse('"2026-01-01"')]);
    const agent = new Agent({
      provider,
      logger: silent,
      config: { output: z.string().transform((text) => new Map([[text, 1]])) },
    });
    const result = await agent.run("go");
    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe("config_invalid");
    expect(result.error?.message).toContain("a value JSON cannot hold");
  });
});
