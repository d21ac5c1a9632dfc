import type { RedisClient } from "../redis-connection.js";
import type { RedisKeys } from "../redis-keys.js";

/** A run's keys in its tree, as the deletion scripts take them (`redis-delete-scripts.ts`). */
export interface TreePlace {
  /** The `treeBelow` hashes holding the run: its parent's, and its root's when another. */
  holders: string[];
  /** Its link, deleted with it. */
  link: string;
}

/**
 * Where `runId` sits in its tree, read from its link: none of its parent's or root's hashes for
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
  if (parentRunId === undefined) return { holders: [], link };
  const holders = [keys.treeBelow(parentRunId)];
  if (rootRunId !== undefined && rootRunId !== parentRunId) holders.push(keys.treeBelow(rootRunId));
  return { holders, link };
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
