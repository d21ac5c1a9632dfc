import { describe, expect, it } from "vitest";
import { canAbort, unabortableSignal, whenAborted } from "../../../src/core/when-aborted.js";

describe("whenAborted", () => {
  it("calls every listener still listening once, in the order they were added", () => {
    const controller = new AbortController();
    const calls: string[] = [];
    whenAborted(controller.signal, () => calls.push("first"));
    const stopSecond = whenAborted(controller.signal, () => calls.push("second"));
    whenAborted(controller.signal, () => calls.push("third"));
    stopSecond();
    controller.abort();
    controller.abort();
    expect(calls).toEqual(["first", "third"]);
  });

  it("keeps listeners of different signals apart", () => {
    const one = new AbortController();
    const other = new AbortController();
    const calls: string[] = [];
    whenAborted(one.signal, () => calls.push("one"));
    whenAborted(other.signal, () => calls.push("other"));
    other.abort();
    expect(calls).toEqual(["other"]);
    one.abort();
    expect(calls).toEqual(["other", "one"]);
  });

  it("lets a listener stop another one before it runs", () => {
    const controller = new AbortController();
    const calls: string[] = [];
    let stopLater = (): void => {};
    whenAborted(controller.signal, () => {
      calls.push("first");
      stopLater();
    });
    stopLater = whenAborted(controller.signal, () => calls.push("later"));
    controller.abort();
    expect(calls).toEqual(["first"]);
  });

  it("tells a signal nothing can abort from one a controller holds", () => {
    const signal = unabortableSignal();
    expect(signal.aborted).toBe(false);
    expect(canAbort(signal)).toBe(false);
    expect(canAbort(new AbortController().signal)).toBe(true);
    expect(canAbort(AbortSignal.any([signal]))).toBe(true);
    // Each run gets its own: nothing listening on one outlives its run.
    expect(unabortableSignal()).not.toBe(signal);
  });
});
