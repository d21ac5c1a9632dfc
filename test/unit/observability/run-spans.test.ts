// The run spans a runtime keeps open until their runs end are bounded: by count (`maxOpen`) and
// by age (`maxAgeMs`), each ended once, and only by their own run.
import { describe, expect, it } from "vitest";
import { RunSpans } from "../../../src/observability/run-span.js";
import { useTracing } from "../../support/tracing.js";

const tracing = useTracing();

const info = (runId: string) => ({
  agent: "support",
  runId,
  sessionId: "session-1",
  model: "model-x",
  provider: "scripted",
});

const finished = {
  status: "completed",
  error: null,
  usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
  iterations: 2,
};

const statusOf = (runId: string) =>
  tracing
    .spans()
    .filter((span) => span.attributes["harnessx.run.id"] === runId)
    .map((span) => span.attributes["harnessx.run.status"] ?? "(none)");

describe("RunSpans", () => {
  it("keeps at most maxOpen spans open: a run past the cap has its span ended at submit", () => {
    const spans = new RunSpans({ clock: { now: () => 0 }, keepOpen: true, maxOpen: 2 });
    expect(spans.open(info("run-1"))["harnessx-run-span"]).toBe("open");
    expect(spans.open(info("run-2"))["harnessx-run-span"]).toBe("open");
    expect(spans.open(info("run-3"))["harnessx-run-span"]).toBe("ended");
    expect(spans.size).toBe(2);
    expect(statusOf("run-3")).toEqual(["(none)"]);
    spans.finish("run-1", finished);
    expect(spans.open(info("run-4"))["harnessx-run-span"]).toBe("open");
  });

  it("ends a span open longer than maxAgeMs as not observed, at the next open", () => {
    let now = 0;
    const spans = new RunSpans({ clock: { now: () => now }, keepOpen: true, maxAgeMs: 1000 });
    spans.open(info("old"));
    now = 500;
    spans.open(info("young"));
    now = 1200;
    spans.open(info("new"));
    expect(statusOf("old")).toEqual(["not_observed"]);
    const [old] = tracing.spans().filter((span) => span.attributes["harnessx.run.id"] === "old");
    expect(old?.attributes["harnessx.run.observed"]).toBe(false);
    expect(spans.size).toBe(2);
    spans.finish("young", finished);
    expect(statusOf("young")).toEqual(["completed"]);
  });

  it("ends a span once, with its run's totals, and only by that run's own carrier", () => {
    const spans = new RunSpans({ clock: { now: () => 0 }, keepOpen: true });
    const first = spans.open(info("run-1"));
    // The same run submitted again from here: the second span is not the run's.
    const again = spans.open(info("run-1"));
    expect(again["harnessx-run-span"]).toBe("ended");
    spans.finish(
      "run-1",
      { ...finished, status: "not_submitted" },
      { ...first, traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
    );
    expect(statusOf("run-1")).toEqual(["not_submitted"]);
    spans.finish("run-1", finished, first);
    spans.finish("run-1", finished);
    const ended = tracing.spans().filter((span) => span.attributes["harnessx.run.id"] === "run-1");
    expect(ended.map((span) => span.attributes["harnessx.run.status"])).toEqual([
      "not_submitted",
      "completed",
    ]);
    expect(ended[1]?.attributes["gen_ai.usage.output_tokens"]).toBe(5);
    expect(ended[1]?.attributes["harnessx.run.iterations"]).toBe(2);
  });

  it("ends spans at once while nobody will report their runs' ends, and abandons the open ones", () => {
    const spans = new RunSpans({ clock: { now: () => 0 }, keepOpen: false });
    expect(spans.open(info("run-1"))["harnessx-run-span"]).toBe("ended");
    spans.keepOpen = true;
    spans.open(info("run-2"));
    spans.abandon("closed");
    expect(statusOf("run-2")).toEqual(["closed"]);
    expect(spans.size).toBe(0);
  });
});
