import type { HeldToken, LeaseOutcome, Leases } from "../../store/leases.js";

interface Lease {
  token: number;
  expiresAt: number;
}

/**
 * Leases in memory: one holder per run, a fencing token per grant, wake-ups left for a holder,
 * and cancel requests (heard by this process's jobs at once).
 */
export class MemoryLeases implements Leases {
  readonly lockDurationMs: number;
  readonly #leases = new Map<string, Lease>();
  readonly #fences = new Map<string, number>();
  readonly #wakes = new Set<string>();
  readonly #cancels = new Set<string>();
  /** Who asked to cancel each run, kept with its record (the cancel flag goes at retention). */
  readonly #cancelledBy = new Map<string, string>();
  /** Called as a lease is granted (the store turns a queued run running). */
  readonly #onAcquired: (runId: string) => void;
  #onCancel: ((runId: string) => void) | undefined;

  constructor(options: { lockDurationMs: number; onAcquired: (runId: string) => void }) {
    this.lockDurationMs = options.lockDurationMs;
    this.#onAcquired = options.onAcquired;
  }

  /** Where cancel requests go: the jobs of this process working on the run. */
  listenForCancel(onCancel: ((runId: string) => void) | undefined): void {
    this.#onCancel = onCancel;
  }

  async acquireLease(runId: string): Promise<LeaseOutcome> {
    const now = Date.now();
    const held = this.#leases.get(runId);
    if (held !== undefined && held.expiresAt > now) {
      this.#wakes.add(runId);
      return { acquired: false, remainingMs: held.expiresAt - now };
    }
    const token = (this.#fences.get(runId) ?? 0) + 1;
    this.#fences.set(runId, token);
    this.#leases.set(runId, { token, expiresAt: now + this.lockDurationMs });
    this.#wakes.delete(runId);
    this.#onAcquired(runId);
    return { acquired: true, token };
  }

  async renewLease(runId: string, token: number): Promise<boolean> {
    const held = this.#leases.get(runId);
    if (held?.token !== token) return false;
    held.expiresAt = Date.now() + this.lockDurationMs;
    return true;
  }

  async renewLeases(leases: readonly HeldToken[]): Promise<boolean[]> {
    return Promise.all(leases.map(({ runId, token }) => this.renewLease(runId, token)));
  }

  async releaseLease(runId: string, token: number): Promise<{ wake: boolean }> {
    if (this.#leases.get(runId)?.token === token) this.#leases.delete(runId);
    const wake = this.#wakes.delete(runId);
    return { wake };
  }

  async requestCancel(runId: string, by?: string): Promise<void> {
    this.#cancels.add(runId);
    if (by !== undefined && !this.#cancelledBy.has(runId)) this.#cancelledBy.set(runId, by);
    this.#onCancel?.(runId);
  }

  async cancelledBy(runId: string): Promise<string | undefined> {
    return this.#cancelledBy.get(runId);
  }

  /** Drops who cancelled the run: with its record, not at retention (`forget`). */
  forgetCanceller(runId: string): void {
    this.#cancelledBy.delete(runId);
  }

  async cancelRequested(runId: string): Promise<boolean> {
    return this.isCancelled(runId);
  }

  /** The cancel flag, read at once (inside another role's atomic step). */
  isCancelled(runId: string): boolean {
    return this.#cancels.has(runId);
  }

  /** True while `token` is the run's latest fencing token: a save under it is accepted. */
  fences(runId: string, token: number): boolean {
    return this.#fences.get(runId) === token;
  }

  /** Drops the run's lease, fencing, wake-up and cancel flag (retention, prune). */
  forget(runId: string): void {
    this.#fences.delete(runId);
    this.#leases.delete(runId);
    this.#wakes.delete(runId);
    this.#cancels.delete(runId);
  }
}
