import { entryById } from "../core/id-record.js";
import type { RunResult } from "../core/values.js";
import type { RunEvent } from "../engine/run-events.js";
import type { RunBackend } from "../store/backend.js";
import { BackendError, RunNotFoundError } from "../store/errors.js";
import { callKey, contextView } from "../store/run-view.js";
import { isTerminal, type RunRecord } from "../store/schemas.js";
import { withGivenApprovals } from "./quorum-view.js";

/**
 * A durable run, from any process that shares the backend.
 * @example
 * const handle = await runtime.submit("support", "Where is my order?");
 * for await (const event of handle.events()) console.log(event.type);
 * const result = await handle.result();
 */
export class RunHandle {
  readonly runId: string;
  readonly #backend: RunBackend;

  constructor(runId: string, backend: RunBackend) {
    this.runId = runId;
    this.#backend = backend;
  }

  /**
   * The run's result once it completes, fails, is cancelled or waits for approval. A run
   * waiting for approval that already has a decision recorded is not waiting any more: this
   * resolves with where it goes next.
   */
  async result(): Promise<RunResult> {
    // Streams are read from their start, so nothing published between reads is missed.
    let stream: AsyncIterator<RunEvent> | undefined;
    try {
      for (;;) {
        const settled = await this.#settled();
        if (settled !== undefined) return settled;
        // Not settled: its result is still to come.
        stream ??= this.#backend.events(this.runId, { live: true })[Symbol.asyncIterator]();
        let next = await stream.next();
        while (
          !next.done &&
          next.value.type !== "result" &&
          next.value.type !== "approval_required"
        ) {
          next = await stream.next();
        }
        // A run's final result is saved before it is published: it is the record's result.
        if (!next.done && next.value.type === "result" && isTerminal(next.value.result.status)) {
          return next.value.result;
        }
        if (next.done) {
          const last = await this.#settled();
          if (last !== undefined) return last;
          throw new BackendError(
            `The event stream of run "${this.runId}" ended before it settled.`,
          );
        }
      }
    } finally {
      await stream?.return?.();
    }
  }

  /**
   * The run's `RunEvent`s from the start of its stream, ending after its final `result`.
   * Rejects with `RunNotFoundError` (at the first read) when no such run exists.
   */
  async *events(): AsyncGenerator<RunEvent> {
    await this.record();
    yield* this.#backend.events(this.runId);
  }

  /** The stored record of the run. */
  async record(): Promise<RunRecord> {
    const record = await this.#backend.loadRun(this.runId);
    if (record === undefined) throw new RunNotFoundError(this.runId);
    return record;
  }

  async #settled(): Promise<RunResult | undefined> {
    // The status alone tells a run still going (the usual case, right after submit) without
    // reading its record and conversation.
    const status = await this.#backend.runStatus(this.runId);
    if (status !== undefined && !isTerminal(status) && status !== "awaiting_approval") {
      return undefined;
    }
    const record = await this.record();
    if (isTerminal(record.status)) return record.result ?? undefined;
    if (record.status !== "awaiting_approval" || record.result === null) return undefined;
    if (await this.#backend.cancelRequested(this.runId)) return undefined;
    const context = contextView(record);
    const decided = await this.#backend.decisions(this.runId, context?.iteration ?? 0);
    const asked = (context?.calls ?? []).filter((state) => state.status === "asked");
    const waiting = asked.every((state) => entryById(decided, callKey(state)) === undefined);
    return waiting ? withGivenApprovals(this.#backend, record.result) : undefined;
  }
}
