import { describe, expect, it } from "vitest";
import { z } from "zod";
import { systemTimer } from "../../../src/core/deadline.js";
import { type ToolContext, tool } from "../../../src/index.js";
import { runHandler } from "../../../src/tools/run-handler.js";

const context = (signal = new AbortController().signal): ToolContext => ({
  signal,
  runId: "run-1",
  toolCallId: "call-1",
});

const limit = { timeoutMs: 50, timer: systemTimer };

const withHandler = (handler: (input: object, context: ToolContext) => unknown) =>
  tool({ name: "probe", description: "", input: z.object({}), handler });

describe("runHandler", () => {
  it("gives a handler that ignores its signal an error result at its timeout, and aborts the signal", async () => {
    const seen: AbortSignal[] = [];
    const hangs = withHandler((_input, handlerContext) => {
      seen.push(handlerContext.signal);
      return new Promise(() => {});
    });

    const outcome = await runHandler(hangs, {}, context(), limit);

    expect(outcome.result).toEqual({
      toolCallId: "call-1",
      content: 'Tool "probe" timed out after 50 ms.',
      isError: true,
    });
    expect(outcome.error?.code).toBe("tool_timeout");
    expect(outcome.error?.name).toBe("ToolTimeoutError");
    expect(seen[0]?.aborted).toBe(true);
    expect((seen[0]?.reason as Error | undefined)?.message).toBe(
      'Tool "probe" timed out after 50 ms.',
    );
  });

  it("lets a handler that listens to its signal stop at the timeout", async () => {
    const stopped: string[] = [];
    const listens = withHandler(
      (_input, handlerContext) =>
        new Promise((_resolve, reject) => {
          handlerContext.signal.addEventListener("abort", () => {
            stopped.push("stopped");
            reject(new Error("stopped on abort"));
          });
        }),
    );

    const outcome = await runHandler(listens, {}, context(), limit);

    expect(outcome.result.content).toBe('Tool "probe" timed out after 50 ms.');
    expect(stopped).toEqual(["stopped"]);
  });

  it("returns a handler's value within its timeout", async () => {
    const quick = withHandler(async () => ({ answer: 42 }));
    const outcome = await runHandler(quick, {}, context(), limit);
    expect(outcome).toEqual({
      result: { toolCallId: "call-1", content: '{"answer":42}', isError: false },
    });
  });

  it("turns a throw into an error result and a ToolExecutionError built from the message", async () => {
    const thrown = Object.assign(new Error("upstream said no"), {
      config: { headers: { Authorization: "Bearer canary-91c2" } },
    });
    const throws = withHandler(() => {
      throw thrown;
    });

    const outcome = await runHandler(throws, {}, context(), limit);

    expect(outcome.result).toEqual({
      toolCallId: "call-1",
      content: "upstream said no",
      isError: true,
    });
    expect(outcome.error?.code).toBe("tool_failed");
    expect(outcome.error?.cause).toBeUndefined();
    expect(JSON.stringify(outcome.error)).not.toContain("canary-91c2");
    expect(outcome.thrown).toBe(thrown);
  });

  it("aborts the handler's signal when the caller's aborts", async () => {
    const caller = new AbortController();
    let seen: AbortSignal | undefined;
    const waits = withHandler(
      (_input, handlerContext) =>
        new Promise((_resolve, reject) => {
          seen = handlerContext.signal;
          handlerContext.signal.addEventListener("abort", () => reject(new Error("cancelled")));
        }),
    );
    const pending = runHandler(waits, {}, context(caller.signal), { ...limit, timeoutMs: 60_000 });
    caller.abort();
    const outcome = await pending;
    expect(seen?.aborted).toBe(true);
    expect(outcome.result).toEqual({ toolCallId: "call-1", content: "cancelled", isError: true });
  });
});
