// The run machine alone, one model+tool step (9 events, compose → … → afterTool → compose), in
// four ways of stepping it, interleaved in one process: harnessx's `RunCursor` (the machine's
// own transition function, one scope per process), an actor created and restored per step
// (what the durable worker did before it), one long-lived actor (what a direct run did), and
// XState's pure `transition()` (an actor, a system and an initial snapshot per call). Bytes
// allocated (V8's sampling heap profiler) and CPU µs per step, medians of the repetitions.
//
//   node bench/machine-step.mjs [--steps 3000] [--repetitions 5]
import { loadavg } from "node:os";
import { createActor, initialTransition, transition } from "xstate";
import { RunCursor } from "../dist/machines/run-cursor.js";
import { runMachine } from "../dist/machines/run-machine.js";
import { countAllocations } from "./lib/allocations.mjs";
import { median, option, round } from "./lib/stats.mjs";

const STEPS = option("steps", 3000);
const REPETITIONS = option("repetitions", 5);

const machine = runMachine();
const input = { runId: "r", sessionId: "s", messageCount: 1, maxIterations: 1e9, agent: "a" };
const usage = { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 };
const call = { id: "c1", name: "noop", input: { query: "x" } };
const response = {
  content: [{ type: "tool_use", ...call }],
  toolCalls: [call],
  stopReason: "tool_use",
  usage,
};
const calls = [{ call, status: "allowed", reason: "allowed by default" }];
const result = { toolCallId: "c1", content: "ok", isError: false };
const STEP = [
  { type: "COMPOSED", request: { system: "", messages: [], tools: [], prefixKey: null } },
  { type: "LLM_PREPARED", messages: [], tools: [], prefixKey: null },
  { type: "PROVIDER_RESPONDED", response, durationMs: 1 },
  { type: "RESPONSE_PROCESSED", response },
  { type: "CALLS_PREPARED", calls },
  { type: "PERMISSIONS_RESOLVED", calls },
  { type: "RECHECKED", calls },
  { type: "TOOLS_DISPATCHED", raw: { c1: result } },
  { type: "RESULTS_PROCESSED", results: [result] },
];

/** Each way runs `steps` steps from a run at `compose` and returns where it ended. */
const ways = {
  runCursor(steps) {
    const cursor = RunCursor.start(input);
    for (let index = 0; index < steps; index++) for (const event of STEP) cursor.send(event);
    return cursor.getSnapshot();
  },
  actorPerStep(steps) {
    let persisted = machine.getPersistedSnapshot(initialTransition(machine, input)[0]);
    let snapshot;
    for (let index = 0; index < steps; index++) {
      const actor = createActor(machine, { snapshot: persisted }).start();
      for (const event of STEP) actor.send(event);
      snapshot = actor.getSnapshot();
      persisted = actor.getPersistedSnapshot();
      actor.stop();
    }
    return snapshot;
  },
  oneActor(steps) {
    const actor = createActor(machine, { input }).start();
    for (let index = 0; index < steps; index++) for (const event of STEP) actor.send(event);
    return actor.getSnapshot();
  },
  pureTransition(steps) {
    let [snapshot] = initialTransition(machine, input);
    for (let index = 0; index < steps; index++) {
      for (const event of STEP) {
        const [next, actions] = transition(machine, snapshot, event);
        if (actions.length > 0) throw new Error(`an effect: ${actions[0].type}`);
        snapshot = next;
      }
    }
    return snapshot;
  },
};

const check = (name, snapshot, steps) => {
  if (snapshot.value !== "compose" || snapshot.context.iteration !== steps) {
    throw new Error(`${name}: at ${snapshot.value}, iteration ${snapshot.context.iteration}`);
  }
};

const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

const loadAtStart = loadavg()[0];
for (const [name, way] of Object.entries(ways)) check(name, way(STEPS), STEPS);
const samples = Object.fromEntries(Object.keys(ways).map((name) => [name, { cpu: [], bytes: [] }]));
const names = Object.keys(ways);
for (let repetition = 0; repetition < REPETITIONS; repetition++) {
  for (let offset = 0; offset < names.length; offset++) {
    const name = names[(repetition + offset) % names.length];
    const begin = cpuMicros();
    ways[name](STEPS);
    samples[name].cpu.push((cpuMicros() - begin) / STEPS);
    const counting = await countAllocations();
    ways[name](STEPS);
    samples[name].bytes.push((await counting.stop()) / STEPS);
  }
  process.stderr.write(`[bench] repetition ${repetition + 1}/${REPETITIONS}\n`);
}

const results = Object.fromEntries(
  names.map((name) => [
    name,
    {
      cpuUsPerStep: round(median(samples[name].cpu)),
      cpuUsRepetitions: samples[name].cpu.map((each) => round(each)),
      bytesPerStep: Math.round(median(samples[name].bytes)),
    },
  ]),
);
const over = (name, field) => round(results[name][field] / results.actorPerStep[field]);
process.stdout.write(
  `${JSON.stringify(
    {
      benchmark: "the run machine alone: one model+tool step (9 events) stepped four ways",
      environment: {
        node: process.version,
        loadAverage1m: { start: round(loadAtStart), end: round(loadavg()[0]) },
      },
      workload: { steps: STEPS, repetitions: REPETITIONS, eventsPerStep: STEP.length },
      results,
      overActorPerStep: Object.fromEntries(
        names.map((name) => [
          name,
          { cpu: over(name, "cpuUsPerStep"), bytes: over(name, "bytesPerStep") },
        ]),
      ),
    },
    null,
    2,
  )}\n`,
);
