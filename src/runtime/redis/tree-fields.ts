import type { RedisClient } from "../redis-connection.js";
import { callField, callKeyOfField, type RedisKeys } from "../redis-keys.js";

// A parent's place in the run tree is kept in its own run hash (`redisKeys.run`), beside its
// record: one field per child (its state) and one counting the running ones. A waiting parent
// so keeps no key of its own for its children, and its wake-up (FINISH_CHILD) stays a script
// on the parent's keys. Every tree field starts with a character no field of the run's own
// (`record`, `status`, `fence`, …: letters) starts with, so the two never meet.

/**
 * A child's state in its parent's run hash: running, finished, or released (its call started
 * none, yet its run is stored: it lists as a child, counts as none, and counts again once its
 * call links it again).
 */
export const CHILD_RUNNING = "1";
export const CHILD_FINISHED = "0";
export const CHILD_RELEASED = "2";
/** The field counting the parent's running children (absent at 0). */
export const RUNNING_COUNT = "<";
/**
 * What a child's field starts with: `BY_CALL` when its run id is its parent's, a dot and a call
 * id (`childRunId`, as every child a worker starts is named), followed by that call id; else
 * `BY_ID`, followed by the whole run id. Either way the id is kept as `callField` keeps a call
 * key, so that ids Redis's UTF-8 cannot hold (lone surrogates) map to fields one to one.
 */
const BY_CALL = ">";
const BY_ID = "=";
/** A HSCAN pattern matching the child fields of a run hash, and no other. */
export const CHILD_FIELDS = `[${BY_CALL}${BY_ID}]*`;
/** The Lua condition that `field` (a Lua expression) is a child's field. */
export const isChildFieldLua = (field: string) =>
  `(string.sub(${field}, 1, 1) == "${BY_CALL}" or string.sub(${field}, 1, 1) == "${BY_ID}")`;
/** The Lua condition that `field` is any of the tree's fields (a child's, or the count). */
export const isTreeFieldLua = (field: string) =>
  `(${isChildFieldLua(field)} or ${field} == "${RUNNING_COUNT}")`;

/** The field of child `runId` in the run hash of `parentRunId`. */
export function childField(parentRunId: string, runId: string): string {
  const stem = `${parentRunId}.`;
  return runId.startsWith(stem)
    ? `${BY_CALL}${callField(runId.slice(stem.length))}`
    : `${BY_ID}${callField(runId)}`;
}

/** The child run id a field of `parentRunId`'s run hash names (`childField` undone), if any. */
export function childOfField(parentRunId: string, field: string): string | undefined {
  if (field.startsWith(BY_CALL)) return `${parentRunId}.${callKeyOfField(field.slice(1))}`;
  if (field.startsWith(BY_ID)) return callKeyOfField(field.slice(1));
  return undefined;
}

/**
 * The children of `parentRunId` with their states, read from its run hash: HSCAN matching
 * the child fields only, so that the record and the other fields beside them are not read
 * (the hash is small: one pass in practice).
 */
export async function childStatesOf(
  redis: RedisClient,
  keys: RedisKeys,
  parentRunId: string,
): Promise<Map<string, string>> {
  const states = new Map<string, string>();
  const key = keys.run(parentRunId);
  let cursor = "0";
  do {
    const [next, flat] = await redis.hscan(key, cursor, "MATCH", CHILD_FIELDS, "COUNT", 1000);
    cursor = next;
    for (let at = 0; at + 1 < flat.length; at += 2) {
      const runId = childOfField(parentRunId, flat[at] as string);
      if (runId !== undefined) states.set(runId, flat[at + 1] as string);
    }
  } while (cursor !== "0");
  return states;
}

/** The running children among `states` (`childStatesOf`). */
export const runningIn = (states: ReadonlyMap<string, string>): string[] =>
  [...states].flatMap(([runId, state]) => (state === CHILD_RUNNING ? [runId] : []));
