// Loading an optional or heavy package on first use, so that `import "harnessx"` loads only what
// the core needs (SPEC §15). Each seam names its package once (`load-*.ts` next to its feature).

import {
  DependencyMissingError,
  isMissingPackage,
  type OptionalPackage,
} from "./dependency-missing.js";
import { createRequire } from "./node-builtins.js";

/** A package loaded on first use, and what to say when it is not installed. */
export interface LazyPackage {
  /** The feature that needs it, for the error message, such as "openaiProvider". */
  feature: string;
  /** The packages the feature needs; the first is the one loaded. */
  packages: readonly [OptionalPackage, ...OptionalPackage[]];
}

// Made on first use: creating it is measurable at import (SPEC §15).
let requireHere: NodeJS.Require | undefined;

/** `load()` (a dynamic import), a missing package turned into `DependencyMissingError`. */
export async function importOptional<T>(needs: LazyPackage, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    throw missing(needs, error) ?? error;
  }
}

/**
 * The CommonJS package `needs.packages[0]`, loaded synchronously (for a synchronous factory such
 * as `createDashboard`), a missing package turned into `DependencyMissingError`.
 */
export function requireOptional<T>(needs: LazyPackage): T {
  try {
    requireHere ??= createRequire(import.meta.url);
    return requireHere(needs.packages[0].name) as T;
  } catch (error) {
    throw missing(needs, error) ?? error;
  }
}

function missing(needs: LazyPackage, error: unknown): DependencyMissingError | undefined {
  const absent = needs.packages.some(({ name }) => isMissingPackage(error, name));
  return absent
    ? new DependencyMissingError({ feature: needs.feature, packages: needs.packages, cause: error })
    : undefined;
}

/**
 * A stand-in for a function or class of a package loaded on first use: calling it, `new` on
 * it, `instanceof` it or reading a property loads `load()` once and acts on the real value.
 * The module that imports the stand-in keeps its code as written against the package.
 * @example
 * export const Redis: typeof IORedis = lazyValue(() => requireOptional<typeof import("ioredis")>(needs).Redis);
 */
export function lazyValue<T extends object>(load: () => T): T {
  let loaded: T | undefined;
  const real = (): T => {
    loaded ??= load();
    return loaded;
  };
  // A `function` target: only a callable, constructible target lets the proxy be both.
  const target = function standIn() {};
  const standIn: object = new Proxy(target, {
    apply: (_target, self, args) =>
      Reflect.apply(real() as (...args: unknown[]) => unknown, self, args),
    // `new` on a subclass of the stand-in reaches here through `super()` with the subclass as
    // `newTarget`: the instance must be the subclass's, not the real class's.
    construct: (_target, args, newTarget) => {
      const Real = real() as new (...args: unknown[]) => object;
      return Reflect.construct(Real, args, newTarget === standIn ? Real : newTarget) as object;
    },
    get: (_target, key) => Reflect.get(real(), key),
    has: (_target, key) => Reflect.has(real(), key),
  });
  return standIn as T;
}
