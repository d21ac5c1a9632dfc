/** What a queue does with a job that threw: it is not retried. */
export type JobFailureHandler<T> = (job: T, error: unknown) => void;

interface Entry<T> {
  job: T;
  key: string | undefined;
  /** 0: none (taken before any prioritized job, as BullMQ does); else 1 first, then 2… */
  priority: number;
}

/**
 * An in-process work queue with bounded concurrency: the embedded backend's stand-in for a
 * BullMQ queue and its workers. A job with a `key` is ignored while another job with that key
 * is waiting or running (the counterpart of a BullMQ job id). Jobs are taken by priority as
 * BullMQ takes them: jobs without one first, then priority 1, 2, …; in order of arrival within.
 */
export class MemoryWorkQueue<T> {
  /** Waiting jobs by priority; `#priorities` lists the priorities with a bucket, ascending. */
  readonly #waiting = new Map<number, Entry<T>[]>();
  #priorities: number[] = [];
  #waitingCount = 0;
  readonly #keys = new Set<string>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #idle = new Set<() => void>();
  #process: ((job: T) => Promise<void>) | undefined;
  #concurrency = 1;
  #onFailure: JobFailureHandler<T> = () => {};
  #active = 0;
  #closed = false;

  /** Starts working: up to `concurrency` jobs at once. Jobs added before wait until now. */
  work(
    process: (job: T) => Promise<void>,
    concurrency: number,
    onFailure: JobFailureHandler<T>,
  ): void {
    this.#process = process;
    this.#concurrency = concurrency;
    this.#onFailure = onFailure;
    this.#pump();
  }

  add(job: T, options: { key?: string; delayMs?: number; priority?: number } = {}): void {
    if (this.#closed) return;
    const { key, delayMs = 0, priority = 0 } = options;
    if (key !== undefined) {
      if (this.#keys.has(key)) return;
      this.#keys.add(key);
    }
    if (delayMs > 0) {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        this.#enqueue({ job, key, priority });
      }, delayMs);
      // Held like a Redis connection: work still due keeps the process up until close().
      this.#timers.add(timer);
      return;
    }
    this.#enqueue({ job, key, priority });
  }

  get active(): number {
    return this.#active;
  }

  /** Takes no more jobs; resolves when running jobs finished, or false at the deadline. */
  async close(timeoutMs: number): Promise<boolean> {
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.#waiting.clear();
    this.#priorities = [];
    this.#waitingCount = 0;
    if (this.#active === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const drained = new Promise<boolean>((resolve) => {
      const done = () => resolve(true);
      this.#idle.add(done);
      timer = setTimeout(() => {
        this.#idle.delete(done);
        resolve(false);
      }, timeoutMs);
    });
    try {
      return await drained;
    } finally {
      clearTimeout(timer);
    }
  }

  #enqueue(entry: Entry<T>): void {
    if (this.#closed) return;
    let bucket = this.#waiting.get(entry.priority);
    if (bucket === undefined) {
      bucket = [];
      this.#waiting.set(entry.priority, bucket);
      this.#priorities = [...this.#priorities, entry.priority].sort((a, b) => a - b);
    }
    bucket.push(entry);
    this.#waitingCount += 1;
    this.#pump();
  }

  /** The next waiting job by priority, then arrival. */
  #take(): Entry<T> {
    const priority = this.#priorities[0] as number;
    const bucket = this.#waiting.get(priority) as Entry<T>[];
    const entry = bucket.shift() as Entry<T>;
    if (bucket.length === 0) {
      this.#waiting.delete(priority);
      this.#priorities = this.#priorities.slice(1);
    }
    this.#waitingCount -= 1;
    return entry;
  }

  #pump(): void {
    const process = this.#process;
    if (process === undefined) return;
    while (!this.#closed && this.#active < this.#concurrency && this.#waitingCount > 0) {
      const entry = this.#take();
      this.#active += 1;
      // A fresh macrotask: a job that adds jobs never nests inside its caller's stack.
      setImmediate(() => {
        void this.#run(process, entry);
      });
    }
  }

  async #run(process: (job: T) => Promise<void>, entry: Entry<T>): Promise<void> {
    try {
      await process(entry.job);
    } catch (error) {
      this.#onFailure(entry.job, error);
    } finally {
      if (entry.key !== undefined) this.#keys.delete(entry.key);
      this.#active -= 1;
      if (this.#active === 0) for (const resolve of this.#idle) resolve();
      this.#pump();
    }
  }
}
