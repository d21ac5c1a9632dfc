// A parent's turn cut short: its worker killed (SIGKILL) after the step recorded the turn's
// children (they count as running under it) and before its dispatch save, so none of them is
// stored or started. The step delivered again opens the run where its last save left it (the
// model's response saved) and, under a new deploy's policy, calls one child fewer: that child
// is replaced by the new turn's, and nothing would start or release it. Real worker processes
// on real Redis (see reliability.test.ts for the set-up). The parent completes; the child that
// never ran leaves no link, no place and no key, and the parent's detail and list by parent
// give exactly the children that ran (SPEC §14, "the parent's detail lists `children`").
import { describe, expect, it } from "vitest";
import { childTopic, LEAD_CHILDREN, leadAnswer } from "../fixtures/reliability-agents.js";
import { SLOW_TEST_MS, useReliability } from "../fixtures/reliability-setup.js";
import { toolResults } from "../support/messages.js";
import { keysUnder } from "./redis.js";

const { setUp } = useReliability();

describe("a parent's worker killed between recording its turn's children and its dispatch save", {
  timeout: SLOW_TEST_MS,
}, () => {
  it("a child the step delivered again does not call leaves the tree; the others run once", async () => {
    const test = await setUp();
    const doomed = await test.worker("doomed", { block: true });
    const query = "lead q1 deny:redeployed block:before-dispatch-save";
    const handle = await test.runtime.submit("lead", query);
    await doomed.blockedAt("before-dispatch-save", query);
    const calls = Array.from({ length: LEAD_CHILDREN }, (_, index) => `c${index}`);
    const children = calls.map((call) => `${handle.runId}.${call}`);
    const [, lost = ""] = children;
    const ran = children.filter((child) => child !== lost);

    // Recorded and counted, none stored; the run is not saved waiting.
    await expect
      .poll(async () => (await test.backend.runningChildren(handle.runId)).sort())
      .toEqual(children);
    expect((await handle.record()).status).not.toBe("waiting");
    for (const child of children) expect(await test.backend.loadRun(child)).toBeUndefined();

    await doomed.kill();
    await test.worker("redeployed");
    const result = await handle.result();

    expect(result.status).toBe("completed");
    const blocks = toolResults(result.messages);
    expect(blocks.map((block) => [block.toolCallId, block.isError])).toEqual(
      calls.map((call) => [call, call === "c1"]),
    );
    for (const index of [0, 2]) {
      expect(blocks[index]?.content).toBe(`notes on ${childTopic(query, index)}`);
      expect(await test.count("model", childTopic(query, index))).toBe(1);
    }
    expect(await test.count("model", childTopic(query, 1))).toBe(0);
    expect(result.output).toBe(leadAnswer(blocks.map((block) => block.content)));
    // The turn was not asked of the model again: its response was saved before the kill.
    expect(await test.count("model", query)).toBe(2);

    expect(await test.backend.linkOf(lost)).toBeUndefined();
    expect((await test.backend.childrenOf(handle.runId)).map((each) => each.runId)).toEqual(ran);
    expect((await test.runtime.get(handle.runId)).children?.map((each) => each.runId)).toEqual(ran);
    const listed = await test.runtime.list({ parentRunId: handle.runId });
    expect(listed.runs.map((run) => run.runId).sort()).toEqual(ran);
    expect((await keysUnder(test.prefix, test.url)).filter((key) => key.includes(lost))).toEqual(
      [],
    );
  });
});
