import type { Span } from "@opentelemetry/api";
import type { Clock } from "../core/deps.js";
import { context, propagation, ROOT_CONTEXT, SpanKind, trace } from "./load-otel.js";
import {
  activeTracer,
  endRunSpan,
  type RunSpanInfo,
  type RunSpanOutcome,
  runAttributes,
} from "./spans.js";

// A durable run is one trace with one `invoke_agent` span, whichever processes advance it. With
// @opentelemetry/api alone a span can be ended only by the process that started it, and its id
// is chosen by the SDK when it starts: so the run's span starts at submit and its context is
// stored with the run (`RunRecord.trace`); every step's `chat` and `execute_tool` spans start in
// that context. The submitting process keeps the span open (`RunSpans`) and ends it with the
// run's totals when the run's end reaches it: from its own worker, or (Redis) from the run's
// final summary, whichever process saved it. Where it cannot hear that end, the span ends at
// submit, without totals.

/**
 * The carrier key that marks a stored trace context as the run's own `invoke_agent` span (a
 * run stored without it — submitted where no tracer was registered — gets one per step).
 */
const RUN_SPAN_KEY = "harnessx-run-span";

/** How many run spans one runtime keeps open at most; the runs submitted past it end at submit. */
export const MAX_OPEN_RUN_SPANS = 10_000;

/**
 * How long a run span is kept open at most (a day): a run still going then (say, parked for
 * approval) has its span ended as `not_observed`, without totals.
 */
export const MAX_RUN_SPAN_MS = 24 * 60 * 60 * 1000;

/** Marks a run span ended before its run did: its outcome was not observed. */
const OBSERVED = "harnessx.run.observed";

interface OpenSpan {
  span: Span;
  spanId: string;
  openedAt: number;
}

/**
 * The `invoke_agent` spans of one runtime's durable runs still open in this process, by run id:
 * each ended once, with its run's outcome (`finish`), or when it can no longer be observed
 * (`abandon`, or after `maxAgeMs`). At most `maxOpen` at a time, so that none leaks.
 */
export class RunSpans {
  /** Whether spans opened from now on are kept open (someone will report their runs' ends). */
  keepOpen: boolean;
  readonly #open = new Map<string, OpenSpan>();
  readonly #clock: Clock;
  readonly #maxOpen: number;
  readonly #maxAgeMs: number;

  constructor(options: { clock: Clock; keepOpen: boolean; maxOpen?: number; maxAgeMs?: number }) {
    this.keepOpen = options.keepOpen;
    this.#clock = options.clock;
    this.#maxOpen = options.maxOpen ?? MAX_OPEN_RUN_SPANS;
    this.#maxAgeMs = options.maxAgeMs ?? MAX_RUN_SPAN_MS;
  }

  /** Run spans open now. */
  get size(): number {
    return this.#open.size;
  }

  /**
   * Starts a durable run's `invoke_agent` span, as a child of `parent` (a carrier as
   * `injectTraceContext` wrote it, e.g. a parent run's `execute_tool` span for a child run) or
   * else of the active context, and returns the carrier to store as the run's `trace`. The
   * span stays open while `keepOpen` and fewer than `maxOpen` are; otherwise it ends now.
   * Without a registered tracer, the context active now (or `parent`) is carried as it is.
   */
  open(info: RunSpanInfo, parent?: Readonly<Record<string, string>>): Record<string, string> {
    this.#expire();
    const parentContext =
      parent === undefined ? context.active() : propagation.extract(ROOT_CONTEXT, { ...parent });
    const tracer = activeTracer();
    if (tracer === undefined) return carrierOf(parentContext);
    const span = tracer.startSpan(
      `invoke_agent ${info.agent}`,
      { kind: SpanKind.INTERNAL, attributes: runAttributes(info) },
      parentContext,
    );
    const carrier = carrierOf(trace.setSpan(parentContext, span));
    // No propagator: the steps could not find the span, so it is the run's submit only.
    if (Object.keys(carrier).length === 0) {
      span.end();
      return {};
    }
    if (this.#open.has(info.runId)) {
      // The run was submitted before from here (an idempotent submit): its first span is its own.
      endRunSpan(span, unobserved("not_submitted"));
      return { ...carrier, [RUN_SPAN_KEY]: "ended" };
    }
    if (!this.keepOpen || this.#open.size >= this.#maxOpen) {
      span.end();
      return { ...carrier, [RUN_SPAN_KEY]: "ended" };
    }
    const spanId = span.spanContext().spanId;
    this.#open.set(info.runId, { span, spanId, openedAt: this.#clock.now() });
    return { ...carrier, [RUN_SPAN_KEY]: "open" };
  }

  /**
   * Ends the run's span with its outcome, when it is open here; with `carrier`, only when it is
   * that span (a record that was not stored must not end the span of the run stored first).
   */
  finish(
    runId: string,
    outcome: RunSpanOutcome,
    carrier?: Readonly<Record<string, string>> | undefined,
  ): void {
    const open = this.#open.get(runId);
    if (open === undefined) return;
    if (carrier !== undefined && spanIdOf(carrier) !== open.spanId) return;
    this.#open.delete(runId);
    endRunSpan(open.span, outcome);
  }

  /**
   * Ends every span still open (a closing runtime's: their runs' ends will not be heard here),
   * as `status`, marked not observed, totals unknown.
   */
  abandon(status: string): void {
    for (const [runId, open] of this.#open) {
      this.#open.delete(runId);
      endRunSpan(open.span, unobserved(status), { [OBSERVED]: false });
    }
  }

  /** Ends the spans open longer than `maxAgeMs`; the oldest come first in the map. */
  #expire(): void {
    const oldest = this.#clock.now() - this.#maxAgeMs;
    for (const [runId, open] of this.#open) {
      if (open.openedAt > oldest) return;
      this.#open.delete(runId);
      endRunSpan(open.span, unobserved("not_observed"), { [OBSERVED]: false });
    }
  }
}

/** Whether a stored trace context is a run's own `invoke_agent` span (`RunSpans.open`). */
export const isRunSpan = (carrier: Readonly<Record<string, string>> | undefined): boolean =>
  carrier?.[RUN_SPAN_KEY] !== undefined;

const unobserved = (status: string): RunSpanOutcome => ({
  status,
  error: null,
  usage: undefined,
  iterations: undefined,
});

function carrierOf(active: ReturnType<typeof context.active>): Record<string, string> {
  const carrier: Record<string, string> = {};
  if (trace.getSpanContext(active) !== undefined) propagation.inject(active, carrier);
  return carrier;
}

function spanIdOf(carrier: Readonly<Record<string, string>>): string | undefined {
  if (carrier[RUN_SPAN_KEY] !== "open") return undefined;
  return trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { ...carrier }))?.spanId;
}
