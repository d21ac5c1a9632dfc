import type { RedisClient } from "../redis-connection.js";
import type { RedisKeys } from "../redis-keys.js";
import { childField } from "./tree-fields.js";

/** A run's keys in its tree, as the deletion scripts take them (`redis-delete-scripts.ts`). */
export interface TreePlace {
  /**
   * The keys holding the run: its parent's run hash (where `field` is its place), and its
   * root's `treeDeep` when the root is another run.
   */
  holders: string[];
  /** The run's field in its parent's run hash ("" for a root). */
  field: string;
  /** Its link, deleted with it. */
  link: string;
}

/**
 * Where `runId` sits in its tree, read from its link: none of its parent's or root's keys for
 * a root (or a link that cannot be read, which is deleted all the same).
 */
export async function treePlaceOf(
  redis: RedisClient,
  keys: RedisKeys,
  runId: string,
): Promise<TreePlace> {
  const link = keys.treeLink(runId);
  const stored = await redis.get(link);
  const { parentRunId, rootRunId } = linkEnds(stored);
  if (parentRunId === undefined) return { holders: [], field: "", link };
  const holders = [keys.run(parentRunId)];
  if (rootRunId !== undefined && rootRunId !== parentRunId) holders.push(keys.treeDeep(rootRunId));
  return { holders, field: childField(parentRunId, runId), link };
}

/** The parent and root a stored link names, as far as they can be read. */
function linkEnds(stored: string | null): { parentRunId?: string; rootRunId?: string } {
  if (stored === null) return {};
  try {
    const value: unknown = JSON.parse(stored);
    if (typeof value !== "object" || value === null) return {};
    const { parentRunId, rootRunId } = value as Record<string, unknown>;
    return {
      ...(typeof parentRunId === "string" && parentRunId !== "" ? { parentRunId } : {}),
      ...(typeof rootRunId === "string" && rootRunId !== "" ? { rootRunId } : {}),
    };
  } catch {
    return {};
  }
}
