/** A handler's return value as tool-result text, or why JSON cannot represent it. */
export type StringifiedOutput = { ok: true; text: string } | { ok: false; problem: string };

const describeKey = (key: string) => (key === "" ? "the value returned" : `"${key}"`);

/**
 * A handler's return value as tool-result text: strings as they are, `undefined` as "", anything
 * else as JSON. A value JSON cannot represent (a BigInt, a function, a symbol, a cycle) is not
 * guessed at (`String(value)` would give "[object Object]"): the problem is named instead.
 */
export function stringifyOutput(output: unknown): StringifiedOutput {
  if (typeof output === "string") return { ok: true, text: output };
  if (output === undefined) return { ok: true, text: "" };
  let problem: string | undefined;
  try {
    const text = JSON.stringify(output, (key: string, value: unknown) => {
      if (problem !== undefined) return undefined;
      const kind = typeof value;
      if (kind === "bigint" || kind === "function" || kind === "symbol") {
        problem = `a ${kind === "bigint" ? "BigInt" : kind} at ${describeKey(key)}`;
        return undefined;
      }
      return value;
    });
    if (problem !== undefined) return { ok: false, problem };
    return text === undefined
      ? { ok: false, problem: "nothing JSON can hold" }
      : { ok: true, text };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      problem: /circular/i.test(message) ? "a cycle (an object that contains itself)" : message,
    };
  }
}
