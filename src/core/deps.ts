/** Effects the engine needs from the outside world, injectable for tests. */
export interface Clock {
  now(): number;
}

export interface RuntimeDeps {
  clock: Clock;
  generateId(): string;
}
