import { z } from "zod";
import { jsonProblem } from "../core/json-value.js";
import { lazySchema } from "../core/lazy-schema.js";
import { describeIssues } from "../tools/validate.js";
import { BackendError } from "./errors.js";

/** The shape of stored saved state; a value stored with another version is refused. */
export const EXTENSION_STATE_VERSION = 1;

const StoredState = lazySchema(() => z.object({ version: z.number(), value: z.json() }));

/**
 * One value of an extension's saved state as stored: JSON data in an envelope that names its
 * version. A value that is not plain JSON data is refused (`TypeError`) before anything is stored.
 */
export function encodeStateValue(value: unknown): string {
  const problem = jsonProblem(value);
  if (problem !== undefined) throw new TypeError(`Saved state must be JSON data: it ${problem}.`);
  return JSON.stringify({ version: EXTENSION_STATE_VERSION, value });
}

/**
 * Reads a stored value of saved state (`key` names it in errors): one that does not parse, or
 * was stored with another version, is refused with `BackendError`, never misread.
 */
export function decodeStateValue(json: string, key: string): unknown {
  let stored: unknown;
  try {
    stored = JSON.parse(json);
  } catch (error) {
    throw new BackendError(`The saved state ${key} is not valid JSON.`, { cause: error });
  }
  const parsed = StoredState.safeParse(stored);
  if (!parsed.success) {
    throw new BackendError(
      `The saved state ${key} does not parse: ${describeIssues(parsed.error.issues)}`,
    );
  }
  if (parsed.data.version !== EXTENSION_STATE_VERSION) {
    throw new BackendError(
      `The saved state ${key} was stored with version ${parsed.data.version}; this version of harnessx reads version ${EXTENSION_STATE_VERSION} only.`,
    );
  }
  return parsed.data.value;
}
