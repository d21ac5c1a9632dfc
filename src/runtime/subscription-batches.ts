/** How a batch is sent: one SUBSCRIBE or UNSUBSCRIBE naming every channel of the batch. */
export interface SubscriptionSender {
  subscribe(names: readonly string[]): Promise<unknown>;
  unsubscribe(names: readonly string[]): void;
}

/**
 * The channels joined and left in one turn of the event loop, sent as one UNSUBSCRIBE and then
 * one SUBSCRIBE: many runs' readers start and end together (their replies come in one read),
 * and each command is a write of its own on the subscriber connection. Leaving goes first, so
 * a channel left and joined again in the same turn stays subscribed.
 */
export class SubscriptionBatches {
  readonly #sender: SubscriptionSender;
  #joins: string[] = [];
  #leaves: string[] = [];
  #joined: { promise: Promise<void>; settle: (error?: unknown) => void } | undefined;
  #scheduled = false;
  #closed = false;

  constructor(sender: SubscriptionSender) {
    this.#sender = sender;
  }

  /** Resolves once the channel's subscription (with the rest of its batch) is acknowledged. */
  join(name: string): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("the subscriber was closed"));
    this.#joins.push(name);
    this.#joined ??= batchOutcome();
    this.#schedule();
    return this.#joined.promise;
  }

  leave(name: string): void {
    if (this.#closed) return;
    this.#leaves.push(name);
    this.#schedule();
  }

  /** Sends nothing more; joins not sent yet reject. */
  close(): void {
    this.#closed = true;
    this.#joined?.settle(new Error("the subscriber was closed"));
    this.#joined = undefined;
    this.#joins = [];
    this.#leaves = [];
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    // After the promise callbacks of this turn: the readers they start join the same batch.
    process.nextTick(() => this.#flush());
  }

  #flush(): void {
    this.#scheduled = false;
    if (this.#closed) return;
    const leaves = this.#leaves.splice(0);
    const joins = this.#joins.splice(0);
    const joined = this.#joined;
    this.#joined = undefined;
    if (leaves.length > 0) this.#sender.unsubscribe(leaves);
    if (joins.length > 0 && joined !== undefined) {
      this.#sender.subscribe(joins).then(
        () => joined.settle(),
        (error: unknown) => joined.settle(error ?? new Error("SUBSCRIBE failed")),
      );
    }
  }
}

function batchOutcome(): { promise: Promise<void>; settle: (error?: unknown) => void } {
  let settle: (error?: unknown) => void = () => {};
  const promise = new Promise<void>((resolve, reject) => {
    settle = (error) => (error === undefined ? resolve() : reject(error));
  });
  return { promise, settle };
}
