import { HarnessError } from "../core/errors.js";
import { BackendError } from "../store/errors.js";

/** What ioredis says when a command got no answer: timed out, or no connection to send it on. */
const UNANSWERED = [
  "Command timed out",
  "Connection is closed",
  "enableOfflineQueue options is false",
  "Reached the max retries per request limit",
  "None of startup nodes is available",
  "Failed to refresh slots cache",
];
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH"]);

/** True when `error`, or an error it was caused by, says Redis did not answer. */
export function isUnanswered(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; depth += 1) {
    const { code } = cause as { code?: unknown };
    if (typeof code === "string" && NETWORK_CODES.has(code)) return true;
    if (cause.name === "MaxRetriesPerRequestError") return true;
    if (UNANSWERED.some((text) => cause instanceof Error && cause.message.includes(text))) {
      return true;
    }
    cause = cause.cause;
  }
  return false;
}

/**
 * True when `error`, or an error it was caused by, is Redis refusing a write for its
 * `maxmemory` ("OOM command not allowed…", also from inside a script).
 */
export function isOutOfMemory(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; depth += 1) {
    if (cause.message.includes("OOM command not allowed")) return true;
    cause = cause.cause;
  }
  return false;
}

/**
 * `error` as the runtime reports it: a failure to reach Redis becomes `BackendError` with
 * `code: "backend_unavailable"`, Redis out of memory one with `code: "store_full"`; a harnessx
 * error with a code of its own is kept as it is.
 */
export function unavailableOr(error: unknown, message: () => string): unknown {
  if (HarnessError.isHarnessError(error) && error.code !== "backend_failed") return error;
  if (isOutOfMemory(error)) {
    // A script refused at its first write wrote nothing: each of harnessx's scripts that
    // creates data writes nothing before it.
    return new BackendError(
      "Redis is out of memory (its maxmemory is reached) and refused a write; nothing of it was stored. Free memory (prune finished runs) or raise maxmemory, then try again.",
      { code: "store_full", cause: error },
    );
  }
  if (!isUnanswered(error)) return error;
  // A message of its own (say, "Cannot reach Redis at …") says more than the generic one.
  const own = HarnessError.isHarnessError(error) ? error.message : message();
  return new BackendError(own, { code: "backend_unavailable", cause: error });
}

/**
 * The backend's members that are objects of methods of their own (`runtime.recording()` reads
 * `recordings`, extensions read `extensionState`): their methods report failures the same way.
 */
const NESTED_STORES: ReadonlySet<PropertyKey> = new Set(["recordings", "extensionState"]);

/**
 * `backend` whose every method reports a Redis that does not answer as `backend_unavailable`
 * and one out of memory as `store_full`: promises reject with it, and event streams end with it.
 * So do the methods of its nested stores (`recordings`, `extensionState`).
 */
export function reportingUnavailable<T extends object>(backend: T, message: () => string): T {
  const translate = (error: unknown): never => {
    throw unavailableOr(error, message);
  };
  // One wrapper per method, made on first use: the backend is called many times a run.
  const wrappers = new Map<
    PropertyKey,
    { method: unknown; wrapper: (...args: unknown[]) => unknown }
  >();
  const nested = new Map<PropertyKey, { store: object; wrapped: object }>();
  return new Proxy(backend, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value === "object" && value !== null && NESTED_STORES.has(property)) {
        const known = nested.get(property);
        if (known?.store === value) return known.wrapped;
        const wrapped = reportingUnavailable(value, message);
        nested.set(property, { store: value, wrapped });
        return wrapped;
      }
      if (typeof value !== "function") return value;
      const known = wrappers.get(property);
      if (known?.method === value) return known.wrapper;
      const wrapper = (...args: unknown[]) => {
        const result: unknown = Reflect.apply(value, target, args);
        if (result instanceof Promise) return result.catch(translate);
        if (isAsyncIterable(result)) return translated(result, translate);
        return result;
      };
      wrappers.set(property, { method: value, wrapper });
      return wrapper;
    },
  });
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === "object" && value !== null && Symbol.asyncIterator in value;
}

async function* translated<T>(
  source: AsyncIterable<T>,
  translate: (error: unknown) => never,
): AsyncGenerator<T> {
  try {
    yield* source;
  } catch (error) {
    translate(error);
  }
}
