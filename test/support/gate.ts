// Gates: how tests hold a step, a handler or a provider at a known point and release it, instead
// of waiting for a duration (STYLE.md 13).

/** What `gate()` gives: a promise the test opens by hand, and word of who waits on it. */
export interface Gate {
  /** Opens the gate: every `opened` and `wait()` resolves. */
  open: () => void;
  /** Resolves once the gate is open. */
  opened: Promise<void>;
  /** Resolves once somebody called `wait()`. */
  entered: Promise<void>;
  /** Says it entered, then waits for the gate to open. */
  wait: () => Promise<void>;
}

/** A promise the test opens by hand, and one that says when somebody started waiting on it. */
export function gate(): Gate {
  const opening = deferred<void>();
  const entering = deferred<void>();
  return {
    open: () => opening.resolve(),
    opened: opening.promise,
    entered: entering.promise,
    async wait(): Promise<void> {
      entering.resolve();
      await opening.promise;
    },
  };
}

/** A promise and the function that resolves it. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
