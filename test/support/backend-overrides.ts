import type { RunBackend } from "../../src/backend.js";

/**
 * `backend` with some of its methods replaced by `overrides`: a test watches or breaks one call
 * while everything else goes straight to the real backend.
 */
export function withOverrides(backend: RunBackend, overrides: Partial<RunBackend>): RunBackend {
  return new Proxy(backend, {
    get(target, property, receiver) {
      if (Object.hasOwn(overrides, property)) {
        return overrides[property as keyof RunBackend];
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function"
        ? (value as (...args: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}
