// The run store: list runs a page at a time, newest first and filtered; read one run in full with
// its audit trail of decisions; delete a run, erase a session, prune finished runs. The same calls work on redisBackend({ url }),
// where a page costs the same with a thousand runs stored or a hundred thousand.
import { pino } from "pino";
import { AgentRuntime, type HarnessError, memoryBackend } from "../src/index.js";
import { demoSupportAgent } from "../src/testing.js";

const logger = pino({ level: "silent" });
const runtime = new AgentRuntime({
  agents: [demoSupportAgent({ logger })], // scripted model: searches, asks before refunds
  backend: memoryBackend(),
  logger,
});
await runtime.start();

for (const order of [1, 2, 3, 4, 5]) {
  await (
    await runtime.submit("support", `Where is order ${order}?`, { sessionId: "alice" })
  ).result();
}
const refund = await runtime.submit("support", "Refund order 7", { sessionId: "alice" });
const parked = await refund.result();
await runtime.approve(refund.runId, parked.pending[0]?.toolCallId ?? "", {
  by: "ops-lead",
  reason: "a loyal customer",
});
await refund.result();
const waiting = await runtime.submit("support", "Refund order 8", { sessionId: "bob" });
await waiting.result(); // parked: waits for a person

// Newest first, a page at a time: pass nextCursor back until it is null.
let cursor: string | undefined;
let pageNumber = 0;
do {
  const page = await runtime.list({ limit: 3, ...(cursor === undefined ? {} : { cursor }) });
  pageNumber += 1;
  console.log(`page ${pageNumber}: ${page.runs.map((run) => run.status).join(", ")}`);
  cursor = page.nextCursor ?? undefined;
} while (cursor !== undefined);

const alice = await runtime.list({ sessionId: "alice", status: "completed" });
console.log(`alice's completed runs: ${alice.runs.length}`);
const inbox = await runtime.list({ status: "awaiting_approval" });
console.log(`waiting for a person: ${inbox.runs.map((run) => run.pending[0]?.name).join(", ")}`);

// A search (a run id prefix, or an exact session id) and a time range [since, until).
const found = await runtime.list({ q: refund.runId.slice(0, 8) });
console.log(`found by an id prefix: ${found.runs.map((run) => run.runId === refund.runId)}`);
console.log(`bob's runs by q: ${(await runtime.list({ q: "bob" })).runs.length}`);
const lastHour = await runtime.list({ since: Date.now() - 3_600_000, until: Date.now() + 1 });
console.log(`created in the last hour: ${lastHour.runs.length}`);
// Totals from counters kept per time bucket as runs are written: no scan of the runs.
const overview = await runtime.overview({ window: "1h" });
console.log(
  `last hour: ${overview.counts.completed} completed, ${overview.approvals.waiting} waiting, ` +
    `support ran ${overview.usage.byAgent.support?.runs} runs`,
);

const detail = await runtime.get(refund.runId);
console.log(
  `refund run: ${detail.status}, ${detail.messages.length} messages, ${detail.iterations} iterations`,
);
for (const decision of detail.decisions) {
  console.log(
    `  decision: ${decision.name} ${decision.decision} by ${decision.by} (${decision.reason})`,
  );
}

// Deleting one run (finished, or one whose stored record cannot be read); a run still going is
// refused with RunActiveError (cancel it first).
await runtime.delete(refund.runId);
const gone = await runtime.get(refund.runId).catch((error: HarnessError) => error.code);
console.log(`deleted the refund run: get says ${gone}`);
// Erasing a session: its finished runs and its extensions' saved state; runs still going stay.
const bob = await runtime.deleteSession("bob");
console.log(
  `bob's session: ${bob.runs} runs deleted (his run still waits), ${bob.states} saved states`,
);

// Prune skips (and counts) a run whose stored summary cannot be read, instead of failing.
const { deleted, unreadable } = await runtime.prune({ finishedBefore: Date.now() + 1 });
console.log(
  `pruned ${deleted} finished runs (${unreadable} unreadable); left: ${(await runtime.list()).runs.map((run) => run.status).join(", ")}`,
);
await runtime.close();
