/**
 * A handle to something added to a registry (middleware, a hook, a rule).
 * `close()` removes it; calling it again does nothing.
 */
export class Registration implements Disposable {
  #remove: (() => void) | undefined;

  constructor(remove: () => void) {
    this.#remove = remove;
  }

  get closed(): boolean {
    return this.#remove === undefined;
  }

  close(): void {
    const remove = this.#remove;
    this.#remove = undefined;
    remove?.();
  }

  [Symbol.dispose](): void {
    this.close();
  }
}
