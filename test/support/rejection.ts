import { expect } from "vitest";
import { HarnessError } from "../../src/index.js";

/** What `promise` rejects with; fails the test when it fulfils. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

/** The HarnessError `promise` rejects with; fails the test when it resolves or rejects otherwise. */
export async function harnessRejection(promise: Promise<unknown>): Promise<HarnessError> {
  try {
    await promise;
  } catch (error) {
    expect(HarnessError.isHarnessError(error)).toBe(true);
    return error as HarnessError;
  }
  throw new Error("expected a rejection with a HarnessError");
}
