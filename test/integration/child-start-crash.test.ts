// A parent's turn that starts child runs, with its worker killed (SIGKILL) between the
// dispatch save (which stores the parent `waiting` and records its children) and the bulk
// submit of the children: real worker processes on real Redis (see reliability.test.ts for the
// set-up). The step job the dead worker held is delivered again once its lock runs out, and a
// fresh worker starts every child, once each; the parent finishes with every result, in call
// order (SPEC §14, "Waiting holds nothing"). When the step delivered again dies too, before it
// queues the tool jobs that start the children, more than `maxStalledCount` times in all, the
// queue gives the step up: the give-up finds the parent at dispatch and queues those tool jobs
// itself, so the parent does not wait forever for children nothing starts (SPEC §8, "nothing
// decided may stall"). Killed right after the bulk submit stored the children, the parent's log
// holds each child's `child_started` already (the write that stores a child appends it), and
// the step delivered again tells none twice.
import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/index.js";
import { childTopic, LEAD_CHILDREN, leadAnswer } from "../fixtures/reliability-agents.js";
import { SLOW_TEST_MS, useReliability } from "../fixtures/reliability-setup.js";
import { toolResults } from "../support/messages.js";

const { setUp } = useReliability();

/** The child run ids the parent's log names in its events of `type`, in log order. */
function childRunIdsOf(events: readonly RunEvent[], type: "child_started" | "child_finished") {
  return events.flatMap((event) =>
    (event.type === "child_started" || event.type === "child_finished") && event.type === type
      ? [event.childRunId]
      : [],
  );
}

describe("a parent's worker killed between its dispatch save and its children's start", {
  timeout: SLOW_TEST_MS,
}, () => {
  it("a fresh worker starts every child once, and the parent gets every result in call order", async () => {
    const test = await setUp();
    const doomed = await test.worker("doomed", { block: true });
    const query = "lead q1 block:before-children";
    const handle = await test.runtime.submit("lead", query);
    await doomed.blockedAt("before-children", query);
    const calls = Array.from({ length: LEAD_CHILDREN }, (_, index) => `c${index}`);
    const children = calls.map((call) => `${handle.runId}.${call}`);
    const topics = calls.map((_, index) => childTopic(query, index));

    // Saved waiting, its children recorded and counted, none of them stored or started.
    const saved = await handle.record();
    expect([saved.status, saved.phase]).toEqual(["waiting", "dispatch"]);
    expect((await test.backend.runningChildren(handle.runId)).sort()).toEqual(children);
    for (const child of children) expect(await test.backend.loadRun(child)).toBeUndefined();

    await doomed.kill();
    await test.worker("fresh");
    const result = await handle.result();

    expect(result.status).toBe("completed");
    const notes = topics.map((topic) => `notes on ${topic}`);
    expect(
      toolResults(result.messages).map((block) => [block.toolCallId, block.content, block.isError]),
    ).toEqual(calls.map((call, index) => [call, notes[index], false]));
    expect(result.output).toBe(leadAnswer(notes));
    // Nothing ran twice: the parent's model once a turn, each child's once.
    expect(await test.count("model", query)).toBe(2);
    for (const topic of topics) expect(await test.count("model", topic)).toBe(1);
    const listed = await test.runtime.list({ parentRunId: handle.runId });
    expect(listed.runs.map((run) => [run.runId, run.status]).sort()).toEqual(
      children.map((child) => [child, "completed"]),
    );
    const { events } = await test.runtime.events(handle.runId);
    const started = childRunIdsOf(events, "child_started");
    const finished = childRunIdsOf(events, "child_finished");
    expect(started.sort()).toEqual(children);
    expect(finished.sort()).toEqual(children);
  });
});

describe("a parent's step given up at dispatch before its children started", {
  timeout: SLOW_TEST_MS,
}, () => {
  it("the give-up queues the tool jobs that start them: every child runs once, and the parent completes", async () => {
    const test = await setUp();
    const query = "lead q2 block:before-children block:before-child-jobs";
    const calls = Array.from({ length: LEAD_CHILDREN }, (_, index) => `c${index}`);
    const topics = calls.map((_, index) => childTopic(query, index));
    // Killed between the dispatch save and the children's bulk submit.
    const first = await test.worker("first", { block: true, maxStalledCount: 1 });
    const handle = await test.runtime.submit("lead", query);
    await first.blockedAt("before-children", query);
    const children = calls.map((call) => `${handle.runId}.${call}`);
    await first.kill();
    // Delivered again (stalled once, within maxStalledCount 1): the step opens the waiting
    // parent at dispatch and is killed before it queues the tool jobs that start its children.
    const second = await test.worker("second", { block: true, maxStalledCount: 1 });
    await second.blockedAt("before-child-jobs", query);
    await second.kill();
    for (const child of children) expect(await test.backend.loadRun(child)).toBeUndefined();

    // Stalled twice: the next worker gives the step job up, and the give-up finds the parent
    // at dispatch with calls that have no result and no tool job.
    await test.worker("third", { maxStalledCount: 1 });
    const result = await handle.result();

    expect(result.status).toBe("completed");
    const notes = topics.map((topic) => `notes on ${topic}`);
    expect(
      toolResults(result.messages).map((block) => [block.toolCallId, block.content, block.isError]),
    ).toEqual(calls.map((call, index) => [call, notes[index], false]));
    expect(await test.count("model", query)).toBe(2);
    for (const topic of topics) expect(await test.count("model", topic)).toBe(1);
    const failed = await test.queue("steps").getJobs(["failed"]);
    expect(failed.map((job) => job.failedReason)).toEqual([
      "job stalled more than allowable limit",
    ]);
    const { events } = await test.runtime.events(handle.runId);
    const started = childRunIdsOf(events, "child_started");
    expect(started.sort()).toEqual(children);
  });
});

describe("a parent's worker killed right after its children's bulk submit", {
  timeout: SLOW_TEST_MS,
}, () => {
  it("the parent's log holds each child's child_started from the write that stored the child, once", async () => {
    const test = await setUp();
    // One step at a time: the doomed worker's only step slot is the blocked parent's, so no
    // child runs before it dies (a child it ran halfway would run its model twice).
    const doomed = await test.worker("doomed", { block: true, concurrency: 1 });
    const query = "lead q3 block:after-children";
    const handle = await test.runtime.submit("lead", query);
    await doomed.blockedAt("after-children", query);
    const calls = Array.from({ length: LEAD_CHILDREN }, (_, index) => `c${index}`);
    const children = calls.map((call) => `${handle.runId}.${call}`);
    const startedIn = async () => {
      const { events } = await test.runtime.events(handle.runId);
      return events.flatMap((event) => (event.type === "child_started" ? [event] : []));
    };

    // Stored, and each already told on the parent's log, in call order: nothing the step does
    // after the submit is needed for it.
    for (const child of children) {
      expect((await test.backend.loadRun(child))?.status).toBe("queued");
    }
    const told = calls.map((call, index) => ({
      type: "child_started",
      childRunId: children[index],
      agent: "researcher",
      toolCallId: call,
    }));
    expect(await startedIn()).toEqual(told);

    await doomed.kill();
    await test.worker("fresh");
    const result = await handle.result();

    expect(result.status).toBe("completed");
    const notes = calls.map((_, index) => `notes on ${childTopic(query, index)}`);
    expect(
      toolResults(result.messages).map((block) => [block.toolCallId, block.content, block.isError]),
    ).toEqual(calls.map((call, index) => [call, notes[index], false]));
    expect(await test.count("model", query)).toBe(2);
    for (const index of calls.keys()) {
      expect(await test.count("model", childTopic(query, index))).toBe(1);
    }
    // The step delivered again found its children stored, and told nothing twice.
    expect(await startedIn()).toEqual(told);
    const { events } = await test.runtime.events(handle.runId);
    const finished = childRunIdsOf(events, "child_finished");
    expect(finished.sort()).toEqual(children);
  });
});
