import { describe, expect, it } from "vitest";
import type { RunBackend } from "../../../src/backend.js";
import type { RunEvent } from "../../../src/index.js";
import { coalesceDeltas, eventPublisher } from "../../../src/store/event-publisher.js";

const text = (value: string): RunEvent => ({ type: "text_delta", text: value });
const thinking = (value: string): RunEvent => ({ type: "thinking_delta", text: value });
const toolStart: RunEvent = {
  type: "tool_start",
  toolCall: { id: "call_1", name: "search", input: {} },
};

/** A backend whose `publish` records each append and waits for the test to let it finish. */
function recordingBackend() {
  const appends: RunEvent[][] = [];
  const releases: Array<() => void> = [];
  const backend = {
    publish: (_runId: string, events: RunEvent | readonly RunEvent[]) => {
      appends.push(Array.isArray(events) ? [...(events as RunEvent[])] : [events as RunEvent]);
      return new Promise<void>((resolve) => releases.push(resolve));
    },
  } as unknown as RunBackend;
  const releaseAll = () => {
    for (const release of releases.splice(0)) release();
  };
  return { backend, appends, releaseAll };
}

describe("coalesceDeltas", () => {
  it("joins consecutive deltas of one kind and keeps everything else in order", () => {
    expect(
      coalesceDeltas([
        text("He"),
        text("llo"),
        thinking("hm"),
        thinking("m"),
        toolStart,
        text("!"),
      ]),
    ).toEqual([text("Hello"), thinking("hmm"), toolStart, text("!")]);
  });
});

describe("eventPublisher", () => {
  it("sends a turn's events together once it yields, and joins those emitted while an append is under way", async () => {
    const { backend, appends, releaseAll } = recordingBackend();
    const publisher = eventPublisher(backend, "run");
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

    publisher.emit(text("He"));
    publisher.emit(text("l"));
    expect(appends).toEqual([]);
    await nextTurn();
    expect(appends).toEqual([[text("Hel")]]);

    publisher.emit(text("lo"));
    publisher.emit(text(", "));
    publisher.emit(toolStart);
    publisher.emit(text("world"));
    await nextTurn();
    expect(appends).toHaveLength(1);
    releaseAll();
    const flushed = publisher.flush();
    await nextTurn();
    releaseAll();
    await flushed;

    expect(appends).toEqual([[text("Hel")], [text("lo, "), toolStart, text("world")]]);
  });

  it("reports a failed append at flush and sends nothing after it", async () => {
    let calls = 0;
    const backend = {
      publish: async () => {
        calls += 1;
        throw new Error("Redis is down");
      },
    } as unknown as RunBackend;
    const publisher = eventPublisher(backend, "run");
    publisher.emit(text("a"));
    await expect(publisher.flush()).rejects.toThrow("Redis is down");
    publisher.emit(text("b"));
    await expect(publisher.flush()).rejects.toThrow("Redis is down");
    expect(calls).toBe(1);
  });
});

describe("eventPublisher take()", () => {
  it("waits until every queued event is appended when the backend does not keep order", async () => {
    const { backend, appends, releaseAll } = recordingBackend();
    const publisher = eventPublisher(backend, "run");
    publisher.emit(text("a"));
    await new Promise((resolve) => setImmediate(resolve));
    publisher.emit(text("b"));
    let taken: RunEvent[] | undefined;
    const taking = publisher.take().then((events) => {
      taken = events;
    });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(taken).toBeUndefined();

    releaseAll();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(taken).toBeUndefined();
    releaseAll();
    await taking;
    expect(appends).toEqual([[text("a")], [text("b")]]);
    expect(taken).toEqual([]);
  });

  it("hands over at once when the backend applies appends and saves in the order issued", async () => {
    const { backend, appends } = recordingBackend();
    const ordered = Object.assign(Object.create(backend) as RunBackend, {
      publish: backend.publish,
      publishesInOrder: true,
    });
    const publisher = eventPublisher(ordered, "run");
    publisher.emit(text("a"));
    await new Promise((resolve) => setImmediate(resolve));
    publisher.emit(text("b"));
    publisher.emit(toolStart);

    // The first append's reply never comes, and take() does not wait for it.
    expect(appends).toEqual([[text("a")]]);
    expect(await publisher.take()).toEqual([text("b"), toolStart]);
    expect(appends).toEqual([[text("a")]]);
  });
});
