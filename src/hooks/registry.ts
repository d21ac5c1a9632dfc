import type { Logger } from "pino";
import { loggableError } from "../core/errors.js";
import { Registration } from "../core/registration.js";
import { HookEvent } from "./events.js";
import type { HookPayloads } from "./payloads.js";

/** What an observer receives. */
export interface HookContext<E extends HookEvent = HookEvent, A = unknown> {
  event: E;
  /** The agent the event comes from. Read it; do not mutate engine data through it. */
  agent: A;
  data: HookPayloads[E];
  /** Milliseconds since the epoch, from the agent's clock. */
  timestamp: number;
}

/** An observer: sync or async; its return value is ignored and its exceptions are logged. */
export type HookObserver<E extends HookEvent = HookEvent, A = unknown> = (
  context: HookContext<E, A>,
) => unknown;

type AnyObserver<A> = HookObserver<HookEvent, A>;

/**
 * Observers of lifecycle events. Hooks observe; they never transform, authorise or audit.
 * @example
 * agent.hooks.on(HookEvent.TOOL_CALL_END, (ctx) => console.log(ctx.data.result.isError));
 */
export class HookRegistry<A = unknown> {
  readonly #observers = new Map<HookEvent, readonly AnyObserver<A>[]>();

  on<E extends HookEvent>(event: E, observer: HookObserver<E, A>): Registration {
    if (typeof observer !== "function") throw new TypeError("A hook observer must be a function.");
    const added = observer as AnyObserver<A>;
    this.#observers.set(event, [...(this.#observers.get(event) ?? []), added]);
    return new Registration(() => {
      const list = this.#observers.get(event) ?? [];
      const index = list.indexOf(added);
      if (index >= 0) this.#observers.set(event, list.toSpliced(index, 1));
    });
  }

  /** Observes `TOOL_CALL_START`. */
  beforeTool(observer: HookObserver<typeof HookEvent.TOOL_CALL_START, A>): Registration {
    return this.on(HookEvent.TOOL_CALL_START, observer);
  }

  /** Observes `TOOL_CALL_END`. */
  afterTool(observer: HookObserver<typeof HookEvent.TOOL_CALL_END, A>): Registration {
    return this.on(HookEvent.TOOL_CALL_END, observer);
  }

  /** Observes `ERROR`. */
  onError(observer: HookObserver<typeof HookEvent.ERROR, A>): Registration {
    return this.on(HookEvent.ERROR, observer);
  }

  has(event: HookEvent): boolean {
    return (this.#observers.get(event)?.length ?? 0) > 0;
  }

  /** Observers of `event` as registered now. */
  observers(event: HookEvent): readonly AnyObserver<A>[] {
    return this.#observers.get(event) ?? [];
  }
}

/**
 * Calls each observer in order; a throwing observer is logged at `warn` and the rest still run.
 * `logger` may be what makes the logger, called only for such a line (a run's child logger is
 * made on its first line).
 */
export async function emitHook<E extends HookEvent, A>(
  registry: HookRegistry<A>,
  context: HookContext<E, A>,
  logger: Logger | (() => Logger),
): Promise<void> {
  for (const observer of registry.observers(context.event)) {
    try {
      // A sync observer's return value is not awaited: no microtask per observer per event.
      const returned = observer(context as HookContext<HookEvent, A>);
      if (isThenable(returned)) await returned;
    } catch (error) {
      // Name, message and stack only: a thrown SDK error may carry request headers.
      (typeof logger === "function" ? logger() : logger).warn(
        { err: loggableError(error), event: context.event },
        "hook observer threw; ignored",
      );
    }
  }
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as { then?: unknown } | null | undefined)?.then === "function";
