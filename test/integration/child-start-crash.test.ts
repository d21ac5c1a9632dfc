// A parent's turn that starts child runs, with its worker killed (SIGKILL) between the
// dispatch save (which stores the parent `waiting` and records its children) and the bulk
// submit of the children: real worker processes on real Redis (see reliability.test.ts for the
// set-up). The step job the dead worker held is delivered again once its lock runs out, and a
// fresh worker starts every child, once each; the parent finishes with every result, in call
// order (SPEC §14, "Waiting holds nothing").
import { describe, expect, it } from "vitest";
import { childTopic, LEAD_CHILDREN, leadAnswer } from "../fixtures/reliability-agents.js";
import { SLOW_TEST_MS, useReliability } from "../fixtures/reliability-setup.js";
import { toolResults } from "../support/messages.js";

const { setUp } = useReliability();

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
    const started = events.flatMap((event) =>
      event.type === "child_started" ? [event.childRunId] : [],
    );
    const finished = events.flatMap((event) =>
      event.type === "child_finished" ? [event.childRunId] : [],
    );
    expect(started.sort()).toEqual(children);
    expect(finished.sort()).toEqual(children);
  });
});
