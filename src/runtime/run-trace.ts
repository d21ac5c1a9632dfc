import type { Logger } from "pino";
import type { Clock } from "../core/deps.js";
import { loggableError } from "../core/errors.js";
import type { Agent } from "../engine/agent.js";
import { RunSpans } from "../observability/run-span.js";
import { activeTracer, requestedModel } from "../observability/spans.js";
import type { RunBackend } from "../store/backend.js";
import { isTerminal, type RunRecord } from "../store/schemas.js";
import type { RunSummary } from "../store/summary.js";
import { traceOf } from "./runtime-options.js";

/**
 * The `invoke_agent` spans of one runtime's runs (`RunSpans`), and how their ends reach this
 * process. On the memory backend every run finishes here: its step ends its span. On Redis a
 * run may finish in any process; once a tracer is registered, this process hears every run's
 * summary (the runs channel, one subscription) and ends a span it keeps when its run's final
 * summary arrives, whichever process saved it — or its own worker, if that comes first. The
 * spans still open when the runtime closes end as `closed`, marked not observed.
 */
export class RunTraces {
  readonly spans: RunSpans;
  readonly #backend: RunBackend;
  readonly #logger: Logger;
  readonly #stop = new AbortController();
  #listening: Promise<void> | undefined;

  constructor(backend: RunBackend, clock: Clock, logger: Logger) {
    this.#backend = backend;
    this.#logger = logger;
    this.spans = new RunSpans({ clock, keepOpen: backend.kind === "memory" });
  }

  /**
   * Call before storing runs: resolves once their ends will be heard here (subscribing on the
   * first call after a tracer is registered), so their spans can stay open. Never rejects: a
   * subscription that fails leaves spans ending at submit, and is tried again next time.
   */
  async ready(): Promise<void> {
    if (this.spans.keepOpen || this.#stop.signal.aborted || activeTracer() === undefined) return;
    this.#listening ??= this.#listen();
    await this.#listening;
  }

  /** Records that were not stored (refused, or a run with the id exists): their spans end now. */
  drop(records: readonly RunRecord[]): void {
    const outcome = {
      status: "not_submitted",
      error: null,
      usage: undefined,
      iterations: undefined,
    };
    for (const record of records) this.spans.finish(record.runId, outcome, record.trace ?? {});
  }

  /** Ends every span still open: this process will hear no more of their runs. */
  close(): void {
    this.#stop.abort();
    this.spans.keepOpen = false;
    this.spans.abandon("closed");
  }

  async #listen(): Promise<void> {
    try {
      const summaries = await this.#backend.watchRuns(this.#stop.signal);
      this.spans.keepOpen = true;
      void this.#follow(summaries);
    } catch (error) {
      this.#listening = undefined;
      this.#logger.warn(
        { err: loggableError(error) },
        "cannot hear runs' summaries: run spans end at submit, without totals",
      );
    }
  }

  async #follow(summaries: AsyncIterable<RunSummary>): Promise<void> {
    try {
      for await (const summary of summaries) {
        if (!isTerminal(summary.status)) continue;
        this.spans.finish(summary.runId, {
          status: summary.status,
          error: summary.error,
          usage: summary.usage,
          iterations: summary.iterations,
        });
      }
    } catch (error) {
      this.#logger.warn({ err: loggableError(error) }, "stopped hearing runs' summaries");
    } finally {
      if (!this.#stop.signal.aborted) {
        // Their ends will not be heard: spans from now on end at submit until heard again.
        this.spans.keepOpen = false;
        this.spans.abandon("not_observed");
        this.#listening = undefined;
      }
    }
  }
}

/**
 * A new run's `trace` field: its `invoke_agent` span, started now as a child of the active span
 * (see `RunSpans.open`), or of `parent`, a parent run's stored context, for a child run.
 */
export function runTraceOf(
  agent: Agent<unknown>,
  run: { agent: string; runId: string; sessionId: string },
  where: { spans: RunSpans; parent?: Readonly<Record<string, string>> | undefined },
): { trace?: Record<string, string> } {
  const info = {
    ...run,
    model: requestedModel(agent.config.model, agent.provider),
    provider: agent.provider?.name,
  };
  return traceOf(where.spans.open(info, where.parent));
}
