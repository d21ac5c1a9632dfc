import type { ToolResult } from "../core/values.js";
import type { RunEvent } from "../engine/run-events.js";
import type { CallState } from "../machines/call-state.js";
import type { FinalPhase, Phase } from "../machines/run-machine.js";
import type { RunBackend } from "../store/backend.js";
import type { StoredCheckpoint } from "../store/checkpoint.js";
import { conversationOf } from "../store/conversation.js";
import type { EventPublisher } from "../store/event-publisher.js";
import type { OpenedRun } from "../store/leases.js";
import type { SaveOptions } from "../store/run-store.js";
import { isTerminal, priorityOf, type RunRecord, type ToolJob } from "../store/schemas.js";

/**
 * The effect boundaries at which a step saves the run (SPEC §8). Every save writes, in one
 * atomic write fenced by the step's lease token: the record (its snapshot, status, result and
 * summary), the messages added since the last save (never the whole conversation), the
 * boundary's checkpoint, and the events emitted and not yet sent, followed by the outcome event
 * of a parked or finished run. What differs per boundary is what else it writes and how long
 * the step waits for it.
 */
export type SaveBoundary =
  | "afterProviderResponse"
  | "afterResults"
  | "dispatch"
  | "parked"
  | "finished"
  | "deferred";

/**
 * How long a save holds the step up: until it is `applied` (its reply came), until it has
 * `left` the process (a backend that batches writes sends a turn's writes at the turn's end),
 * or until it is `sent` (issued behind the save before it; it may sit in this turn's batch).
 */
export type SaveWait = "applied" | "left" | "sent";

/** What each boundary waits for, and why a crash right after its save is safe. */
export const SAVE_BOUNDARIES: Readonly<Record<SaveBoundary, { wait: SaveWait; why: string }>> = {
  afterProviderResponse: {
    wait: "left",
    why:
      "Entering afterLlm. What follows up to the next save is middleware (afterLlmCall) and pure " +
      "stages, which a crash may repeat; the response is out of the process before afterLlmCall " +
      "runs, so a middleware that kills the process does not cost a second model call.",
  },
  afterResults: {
    wait: "sent",
    why:
      "Back at compose after the tool results entered the conversation. What follows is compose " +
      "and the next provider call, which a crash may repeat (a provider call is at-least-once); " +
      "the next save is applied after this one, and the results are committed raw in the ledger.",
  },
  dispatch: {
    wait: "applied",
    why:
      "At dispatch: the tool jobs are queued right behind the save (the last save of the step " +
      "that drove there gives the lease up with it), and its reply carries the raw results " +
      "committed so far. A crash before it is applied leaves the run at the save before, which " +
      "runs again; a tool job finds the run where it stands and ignores a call it is not at.",
  },
  parked: {
    wait: "applied",
    why:
      "Parked for a person: the approval_required event is in the same write, and the approval " +
      "timeout is scheduled only once the run is known parked. A crash before it is applied " +
      "leaves the run at the save before, and the decision is asked for again.",
  },
  finished: {
    wait: "applied",
    why:
      "Finished (completed, failed or cancelled): the result event is in the same write, so no " +
      "reader sees a result before the state it reports is saved; the end hooks run after it. " +
      "It gives the lease up with it.",
  },
  deferred: {
    wait: "applied",
    why:
      "A model call deferred by its rate limit, saved at provider: what ran before the call (the " +
      "run's start and AGENT_START, the iteration's start, compose) does not run again when the " +
      "run comes back.",
  },
};

/** The tool jobs that run `calls` of `record`'s iteration `iteration`. */
export function toolJobsFor(
  record: RunRecord,
  iteration: number,
  calls: readonly CallState[],
): ToolJob[] {
  return calls.map((state) => ({
    runId: record.runId,
    iteration,
    toolCallId: state.call.id,
    agent: record.agent,
    tool: state.call.name,
    ...(state.interruptions === undefined ? {} : { attempt: state.interruptions }),
    ...priorityOf(record),
  }));
}

/** The event a save publishes with the state it reports: a parked or finished run's outcome. */
export function outcomeEvents(record: RunRecord): RunEvent[] {
  const { result } = record;
  if (result === null) return [];
  if (result.status === "awaiting_approval") {
    return [{ type: "approval_required", pending: result.pending }];
  }
  return isTerminal(record.status) ? [{ type: "result", result }] : [];
}

/** The boundary a run stands at as the machine enters `entered` from `left`, if any. */
export function boundaryOf(entered: Phase | FinalPhase, left: Phase): SaveBoundary | undefined {
  switch (entered) {
    case "afterLlm":
      return "afterProviderResponse";
    case "awaitingApproval":
      return "parked";
    case "dispatch":
      return "dispatch";
    case "done":
    case "failed":
    case "cancelled":
      return "finished";
    case "compose":
      return left === "afterTool" ? "afterResults" : undefined;
    default:
      return undefined;
  }
}

/**
 * The lease a step holds, as its saves leave it: a step's last save (the run finished, or
 * handed to its tool jobs) gives the lease up in the same write (`released`, with whether a
 * wake-up was left meanwhile) and calls `onRelease`. Written by the step's saves only.
 */
export interface HeldLease {
  released?: { wake: boolean };
  onRelease?: () => void;
}

/** The status a save stores: a started run is never `queued` again. */
export type SavedStatus = Exclude<RunRecord["status"], "queued">;

/** One boundary's save, as the step asks for it. */
export interface BoundarySave {
  boundary: SaveBoundary;
  /** The run as it stands at the boundary. */
  record: RunRecord;
  /** Where the run stands: the record's phase and status, as `CHECKPOINT` reports them. */
  phase: Phase | FinalPhase;
  status: SavedStatus;
  checkpoint: StoredCheckpoint;
  /** The step's last save: it gives the lease up in the same write. */
  release: boolean;
  /** Tool jobs queued right behind the save (entering dispatch). */
  thenTools: readonly ToolJob[];
  /** The run's iteration at the boundary (raw results read with the save belong to it). */
  iteration: number;
}

/** A save applied, in the order the step issued it. */
export interface AppliedSave {
  record: RunRecord;
  phase: Phase | FinalPhase;
  status: SavedStatus;
  cancelRequested: boolean;
}

export interface StepSavesOptions {
  backend: Pick<RunBackend, "saveRun">;
  runId: string;
  /** The step's lease: every save is fenced by it. */
  token: number;
  /** The run as the step opened it. */
  record: RunRecord;
  /** The step's events, sent with the save that follows them. */
  publisher: EventPublisher;
  lease: HeldLease | undefined;
  /** Raw results read with the lease, for the dispatch the step opened at. */
  opened?: OpenedRun["raw"];
  /** Each save's outcome, applied in the order the saves were issued. */
  onApplied: (applied: AppliedSave) => Promise<void>;
  /** The events a save publishes with the state it reports. */
  outcomeEvents: (record: RunRecord) => RunEvent[];
}

/** A save of the step: sent once the one before it was sent; `done` rejects when it failed. */
interface SaveSlot {
  readonly sent: Promise<void>;
  readonly done: Promise<void>;
}

/**
 * A step's saves, in order. Each is sent right behind the step's save before it, without
 * waiting for that one's reply (`RunStore.saveRun` applies a run's saves in the order they are
 * issued); its outcome is applied after the one before it. Holds the run as at its last
 * boundary, how many of its messages the store holds, and the saves nobody waits for.
 */
export class StepSaves {
  readonly #options: StepSavesOptions;
  #record: RunRecord;
  /** How many of the run's messages the store holds once the saves sent are applied. */
  #storedMessages: number;
  #latest: SaveSlot | undefined;
  /** Saves the step did not wait for (`SAVE_BOUNDARIES[…].wait` short of applied). */
  readonly #unawaited: Array<Promise<void>> = [];
  #applied = 0;
  /** Raw results read with the lease or the last save at dispatch, until taken. */
  #raw: OpenedRun["raw"];
  /** Raw results the step handed to the machine since its last save, for the next checkpoint. */
  #handed: Readonly<Record<string, ToolResult>> | undefined;

  constructor(options: StepSavesOptions) {
    this.#options = options;
    this.#record = options.record;
    this.#storedMessages = conversationOf(options.record).length;
    this.#raw = options.opened;
  }

  /** The run as at its last boundary (saved, or saved behind). */
  get record(): RunRecord {
    return this.#record;
  }

  /** True once a save of this step was applied. */
  get anyApplied(): boolean {
    return this.#applied > 0;
  }

  /** Set once a save gave the step's lease up. */
  get released(): { wake: boolean } | undefined {
    return this.#options.lease?.released;
  }

  /**
   * The raw results committed for `iteration`, when the lease or the last save read them
   * (used once: what runs after may commit more).
   */
  takeRaw(iteration: number): Record<string, ToolResult> | undefined {
    const raw = this.#raw;
    this.#raw = undefined;
    return raw?.iteration === iteration ? raw.results : undefined;
  }

  /**
   * Notes the raw results the step handed to the machine: the next save's checkpoint names them
   * (the boundary after them may come a few phases later).
   */
  handed(raw: Readonly<Record<string, ToolResult>>): void {
    this.#handed = raw;
  }

  /** The raw results handed to the machine since the last save (`handed`), once. */
  takeHanded(): Readonly<Record<string, ToolResult>> | undefined {
    const handed = this.#handed;
    this.#handed = undefined;
    return handed;
  }

  /** Saves one boundary and waits as `SAVE_BOUNDARIES` says for it. */
  async save(save: BoundarySave): Promise<void> {
    this.#record = save.record;
    const done = this.#send(save);
    const { wait } = SAVE_BOUNDARIES[save.boundary];
    if (wait === "applied") return done;
    // Its failure reaches the step's end (`settle`), and fences the saves after it.
    done.catch(() => {});
    this.#unawaited.push(done);
    await this.#latest?.sent;
    if (wait === "sent") return;
    // A backend that batches its writes (Redis: `coalesceWrites`) sends a turn's writes at the
    // turn's end: by the next turn, the save has left the process.
    await new Promise((resolve) => setImmediate(resolve));
  }

  /** Waits for every save the step did not wait for; throws the first that failed. */
  async settle(): Promise<void> {
    if (this.#unawaited.length > 0) await Promise.all(this.#unawaited);
  }

  #send(save: BoundarySave): Promise<void> {
    const previous = this.#latest;
    let markSent = () => {};
    const sent = new Promise<void>((resolve) => {
      markSent = resolve;
    });
    const done = this.#sendAfter(save, previous, markSent);
    done.then(markSent, markSent);
    this.#latest = { sent, done };
    return done;
  }

  async #sendAfter(
    save: BoundarySave,
    previous: SaveSlot | undefined,
    markSent: () => void,
  ): Promise<void> {
    const { backend, runId, token, publisher, lease } = this.#options;
    const { record } = save;
    // No await without a save before it: the run's end hooks follow its final save closely.
    if (previous !== undefined) await previous.sent;
    // Events not sent yet go out with the save, before its outcome event.
    const pending = await publisher.take();
    const storedMessages = this.#storedMessages;
    this.#storedMessages = conversationOf(record).length;
    // Built field by field: no spread copies of the events, nor of an object per flag.
    const outcome = this.#options.outcomeEvents(record);
    const options: SaveOptions = {
      events:
        pending.length === 0 ? outcome : outcome.length === 0 ? pending : [...pending, ...outcome],
      storedMessages,
      checkpoint: save.checkpoint,
    };
    if (save.release) options.release = true;
    if (save.thenTools.length > 0) options.thenTools = save.thenTools;
    const saving = backend.saveRun(runId, token, record, options);
    markSent();
    const saved = await saving;
    if (previous !== undefined) await previous.done.catch(() => {});
    this.#raw =
      saved.raw === undefined ? undefined : { iteration: save.iteration, results: saved.raw };
    this.#applied += 1;
    if (lease !== undefined && saved.released !== undefined) {
      lease.released = saved.released;
      lease.onRelease?.();
    }
    await this.#options.onApplied({
      record,
      phase: save.phase,
      status: save.status,
      cancelRequested: saved.cancelRequested,
    });
  }
}
