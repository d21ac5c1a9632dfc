/** Effects the engine needs from the outside world, injectable for tests. */
export interface Clock {
  now(): number;
}

/** Schedules a callback once, after `ms` milliseconds; the returned function cancels it. */
export interface Timer {
  schedule(callback: () => void, ms: number): () => void;
}

export interface RuntimeDeps {
  clock: Clock;
  generateId(): string;
  /** Times tool handlers and provider calls out. @defaultValue `setTimeout` */
  timer?: Timer;
}
