// A module-level zod schema built on first use, not at import: building every schema of the
// package took about 45 ms of `import "harnessx"` (SPEC §15), most of them for features a
// program never touches.

/**
 * `build()` run once, when the schema is first used (parsed, composed, read); until then a
 * stand-in that acts as the schema it will be: properties, methods, `in` and `instanceof` reach
 * the built schema, so callers keep their code as written against zod.
 * @example
 * export const Usage = lazySchema(() => z.object({ inputTokens: z.number() }));
 */
export function lazySchema<T extends object>(build: () => T): T {
  let built: T | undefined;
  const real = (): T => {
    built ??= build();
    return built;
  };
  return new Proxy({} as T, {
    get: (_target, key) => Reflect.get(real(), key),
    has: (_target, key) => Reflect.has(real(), key),
    set: (_target, key, value) => Reflect.set(real(), key, value),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
    ownKeys: () => Reflect.ownKeys(real()),
    // Reported as configurable: the stand-in itself holds none of them, and a proxy may not
    // claim a non-configurable property its target lacks.
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(real(), key);
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
    },
  });
}
