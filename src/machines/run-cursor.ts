import { createActor } from "xstate";
import type { RunContext, RunInput } from "./run-context.js";
import {
  type RunMachine,
  type RunMachineEvent,
  type RunSnapshot,
  runMachine,
} from "./run-machine.js";

type Scope = Parameters<RunMachine["transition"]>[2];

let shared: Scope | undefined;

/**
 * The actor scope every run of this process is stepped with, built once. XState's own pure
 * `transition(machine, snapshot, event)` builds the same inert scope on every call, and with it
 * an actor, its system and an initial snapshot computed only to be dropped (with this machine's
 * input missing, a thrown TypeError): twice the bytes and four times the CPU of the actor it
 * replaces. The run machine spawns, emits, defers and delays nothing; its guards and `assign`s
 * only see `self` and `system`. An action that would be an effect is executed at once, as a
 * running actor executes it (the machine has none: the unit tests check `transition` returns
 * none).
 */
function scope(): Scope {
  if (shared !== undefined) return shared;
  // Never started: it only lends the scope an actor system and a `self`.
  const self = createActor(runMachine(), {
    input: { runId: "", sessionId: "", messageCount: 0, maxIterations: 0 },
  });
  shared = {
    self,
    id: "",
    sessionId: "",
    system: self.system,
    logger: () => {},
    defer: () => {},
    emit: () => {},
    stopChild: () => {},
    actionExecutor: (action) => action.exec?.(action.info, action.params),
  };
  return shared;
}

/**
 * A run of the run machine as a snapshot value, advanced event by event by the machine's own
 * transition function (`runMachine().transition`): XState decides every next phase and
 * computes every context, with no actor (its mailbox, observers and start) per step.
 */
export class RunCursor {
  #snapshot: RunSnapshot;

  private constructor(snapshot: RunSnapshot) {
    this.#snapshot = snapshot;
  }

  /** A new run at the machine's initial phase (`initialTransition`). */
  static start(input: RunInput): RunCursor {
    return new RunCursor(runMachine().getInitialSnapshot(scope(), input));
  }

  /**
   * A run restored from a persisted snapshot (as `getPersistedSnapshot()` gave it) by XState's
   * `resolveState`: the machine has no history states and spawns no actors, so the value and
   * the context are the whole of it (without `restoreSnapshot`'s walk of the context for actor
   * references).
   */
  static restore(persisted: { value: string; context: unknown; status?: string }): RunCursor {
    const context = persisted.context as RunContext;
    const status = persisted.status as RunSnapshot["status"] | undefined;
    const config = { value: persisted.value, context, ...(status === undefined ? {} : { status }) };
    return new RunCursor(runMachine().resolveState(config));
  }

  getSnapshot(): RunSnapshot {
    return this.#snapshot;
  }

  /** The machine's next snapshot for `event` (an event it does not take changes nothing). */
  send(event: RunMachineEvent): void {
    this.#snapshot = runMachine().transition(this.#snapshot, event, scope());
  }

  getPersistedSnapshot(): ReturnType<RunMachine["getPersistedSnapshot"]> {
    return runMachine().getPersistedSnapshot(this.#snapshot);
  }
}
