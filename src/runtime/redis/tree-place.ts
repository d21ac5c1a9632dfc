import type { RedisClient } from "../redis-connection.js";
import type { RedisKeys } from "../redis-keys.js";
import { childField, childStatesOf } from "./tree-fields.js";

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
  return placeOf(keys, runId, link, linkEnds(await redis.get(link)));
}

function placeOf(
  keys: RedisKeys,
  runId: string,
  link: string,
  { parentRunId, rootRunId }: { parentRunId?: string; rootRunId?: string },
): TreePlace {
  if (parentRunId === undefined) return { holders: [], field: "", link };
  const holders = [keys.run(parentRunId)];
  if (rootRunId !== undefined && rootRunId !== parentRunId) holders.push(keys.treeDeep(rootRunId));
  return { holders, field: childField(parentRunId, runId), link };
}

/** A run's tree keys as its deletion takes them (`redis-delete-scripts.ts`). */
export interface DeletedPlace {
  /** Its link, deleted with it. */
  link: string;
  /** Its holders, its root's `treeDeep` when it has children and is not the root, then each
   * child's link and run hash. */
  keys: string[];
  /** How many `keys`, its field, how many holders, "1" when the `treeDeep` is given, then each
   * child's id and field. */
  argv: string[];
}

/**
 * Where `runId` sits in its tree (`treePlaceOf`), and its children (their links and run
 * hashes): the deletion drops those no run of which is stored, in the write that deletes it.
 * One round trip: the link and the children are read together.
 */
export async function deletedPlaceOf(
  redis: RedisClient,
  keys: RedisKeys,
  runId: string,
): Promise<DeletedPlace> {
  const link = keys.treeLink(runId);
  const [stored, children] = await Promise.all([
    redis.get(link),
    childStatesOf(redis, keys, runId),
  ]);
  const ends = linkEnds(stored);
  const { holders, field } = placeOf(keys, runId, link, ends);
  // Its children are in its root's `treeDeep` when it is not the root.
  const root = ends.parentRunId === undefined ? runId : ends.rootRunId;
  const deep =
    children.size > 0 && root !== undefined && root !== runId ? [keys.treeDeep(root)] : [];
  const childIds = [...children.keys()];
  const treeKeys = [
    ...holders,
    ...deep,
    ...childIds.flatMap((id) => [keys.treeLink(id), keys.run(id)]),
  ];
  return {
    link,
    keys: treeKeys,
    argv: [
      String(treeKeys.length),
      field,
      String(holders.length),
      deep.length > 0 ? "1" : "",
      ...childIds.flatMap((id) => [id, childField(runId, id)]),
    ],
  };
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
