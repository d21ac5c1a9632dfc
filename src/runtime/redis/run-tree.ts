import { BackendError, LeaseLostError } from "../../store/errors.js";
import { type ChildOutcome, oldestFirst, RunLink, type RunTree } from "../../store/run-tree.js";
import type { RunRecord } from "../../store/schemas.js";
import { callField } from "../redis-keys.js";
import { DROP_UNSTARTED_LUA } from "../redis-release-lua.js";
import { LuaScript } from "../redis-scripts.js";
import {
  CHILD_FINISHED_LUA,
  DROP_REPLACED_LUA,
  FINISH_CHILD_LUA,
  LINK_CHILD_LUA,
  RELEASE_CHILD_LUA,
  WAIT_FOR_CHILDREN_LUA,
} from "../redis-tree-lua.js";
import type { RedisContext } from "./context.js";
import { childField, childOfField, childStatesOf, runningIn } from "./tree-fields.js";
import { treePlaceOf } from "./tree-place.js";

const LINK_CHILD = new LuaScript(LINK_CHILD_LUA);
const WAIT_FOR_CHILDREN = new LuaScript(WAIT_FOR_CHILDREN_LUA);
const CHILD_FINISHED = new LuaScript(CHILD_FINISHED_LUA);
const FINISH_CHILD = new LuaScript(FINISH_CHILD_LUA);
const RELEASE_CHILD = new LuaScript(RELEASE_CHILD_LUA);
const DROP_UNSTARTED = new LuaScript(DROP_UNSTARTED_LUA);
const DROP_REPLACED = new LuaScript(DROP_REPLACED_LUA);

/**
 * The run tree in Redis, under the backend's prefix: a child's link (`treeLink`), each run's
 * children in its own run hash (their states, and how many run: redis/tree-fields.ts), and on
 * a root its deeper runs (`treeDeep`); a waiting parent so has no key of its own for its
 * children. On a Cluster every key here shares the prefix's hash slot (`{hx}`) with the runs'
 * own, so linking a child, or a turn's children fenced by the parent's lease, is one script.
 * The parent's wake-up does not depend on that: a child's finish is one script on the parent's
 * own keys only (FINISH_CHILD: its raw results, events and run hash), which commits what it
 * wakes the parent for first-write-wins and decides the wake-up on the parent's run hash, so
 * repeating it after a crash commits nothing twice and at most steps the parent again (a step
 * is a wake-up the run takes in any state), wherever the child's keys live. The run store
 * removes a run's link and its places in its parent's and root's keys as it prunes or deletes
 * the run, with its children never stored; a run deleted while runs below it are kept keeps its
 * tree's fields until they go.
 */
export class RedisRunTree implements RunTree {
  readonly #context: RedisContext;

  constructor(context: RedisContext) {
    this.#context = context;
  }

  async waitForChildren(
    parentRunId: string,
    token: number,
    links: readonly RunLink[],
  ): Promise<void> {
    const { keys, stepRedis } = this.#context;
    const root = links[0]?.rootRunId ?? parentRunId;
    // On the connection of the parent's saves and of its children's finishes (`beforeSteps`),
    // so that Redis applies it before any of them issued after it (`RunTree.waitForChildren`).
    const waiting = WAIT_FOR_CHILDREN.run(
      stepRedis,
      [
        keys.run(parentRunId),
        keys.treeDeep(root),
        ...links.map((link) => keys.treeLink(link.runId)),
      ],
      [
        token,
        root === parentRunId ? "" : "1",
        ...links.flatMap((link) => [
          JSON.stringify(link),
          childField(parentRunId, link.runId),
          link.runId,
        ]),
      ],
    );
    const reply = await this.#context.beforeSteps(parentRunId, waiting);
    if (reply === -1) throw new LeaseLostError(parentRunId, token);
    // Children a crash cut short before its turn's dispatch save: rare, so read here only.
    if (Array.isArray(reply) && reply.length > 0) {
      await this.#dropReplaced(parentRunId, root, reply as string[]);
    }
  }

  /**
   * Drops the children of a turn a crash cut short (replaced by the next: `waitForChildren`),
   * each unless its run is stored: nothing starts them (their start follows the turn's dispatch
   * save, which was lost), and nothing else would release them.
   */
  async #dropReplaced(parentRunId: string, root: string, fields: readonly string[]) {
    const { keys, redis } = this.#context;
    await Promise.all(
      fields.map(async (field) => {
        const runId = childOfField(parentRunId, field);
        if (runId === undefined) return;
        const deep = root === parentRunId ? [] : [keys.treeDeep(root)];
        await DROP_REPLACED.run(
          redis,
          [keys.treeLink(runId), keys.run(runId), keys.run(parentRunId), ...deep],
          [field, runId],
        );
      }),
    );
  }

  async linkChild(link: RunLink): Promise<boolean> {
    const { keys } = this.#context;
    const { runId, parentRunId, rootRunId } = link;
    const linked = await LINK_CHILD.run(
      this.#context.redis,
      [keys.treeLink(runId), keys.run(parentRunId), keys.treeDeep(rootRunId)],
      [
        JSON.stringify(link),
        childField(parentRunId, runId),
        runId,
        rootRunId === parentRunId ? "" : "1",
      ],
    );
    return linked === 1;
  }

  async linkOf(runId: string, saved?: RunRecord): Promise<RunLink | undefined> {
    // Links are written before their child is submitted and never changed: the one the run's
    // finishing save read is the link.
    const read = saved === undefined ? undefined : this.#context.finishedLinks.get(saved);
    const stored =
      read !== undefined && saved?.runId === runId
        ? read || null
        : await this.#context.redis.get(this.#context.keys.treeLink(runId));
    return stored === null ? undefined : parseLink(stored);
  }

  async childrenOf(parentRunId: string): Promise<RunLink[]> {
    const { redis, keys } = this.#context;
    return this.#linksOf([...(await childStatesOf(redis, keys, parentRunId)).keys()]);
  }

  async descendantsOf(rootRunId: string): Promise<RunLink[]> {
    const { redis, keys } = this.#context;
    const [children, deep] = await Promise.all([
      childStatesOf(redis, keys, rootRunId),
      redis.smembers(keys.treeDeep(rootRunId)),
    ]);
    return this.#linksOf([...children.keys(), ...deep]);
  }

  /** The stored links of `ids`, oldest first. */
  async #linksOf(ids: readonly string[]): Promise<RunLink[]> {
    if (ids.length === 0) return [];
    const { redis, keys } = this.#context;
    const stored = await redis.mget(...ids.map((id) => keys.treeLink(id)));
    return stored.flatMap((each) => (each === null ? [] : [parseLink(each)])).sort(oldestFirst);
  }

  async childFinished(link: RunLink, outcome?: ChildOutcome): Promise<boolean> {
    const { keys, redis, stepRedis, maxEvents } = this.#context;
    const { parentRunId, parentIteration, runId } = link;
    if (outcome === undefined) {
      const field = childField(parentRunId, runId);
      return (await CHILD_FINISHED.run(redis, [keys.run(parentRunId)], [field])) === 1;
    }
    const { result, events = [] } = outcome;
    // A write the parent's next step must see, as `commitRaw` is (`beforeSteps`).
    const none = await this.#context.beforeSteps(
      parentRunId,
      FINISH_CHILD.run(
        stepRedis,
        [keys.raw(parentRunId, parentIteration), keys.events(parentRunId), keys.run(parentRunId)],
        [
          callField(result.toolCallId),
          JSON.stringify(result),
          maxEvents,
          childField(parentRunId, runId),
          ...events.map((event) => JSON.stringify(event)),
        ],
      ),
    );
    return none === 1;
  }

  async releaseChild(link: Pick<RunLink, "runId" | "parentRunId">): Promise<void> {
    const { redis, keys } = this.#context;
    // A child its call never started leaves no link behind (nothing else would delete it). The
    // link is read in the round trip of the release; one written again meanwhile names the same
    // places (they follow from the call), and none read means none to drop.
    const [, place] = await Promise.all([
      RELEASE_CHILD.run(
        redis,
        [keys.run(link.parentRunId)],
        [childField(link.parentRunId, link.runId)],
      ),
      treePlaceOf(redis, keys, link.runId),
    ]);
    if (place.holders.length === 0) return;
    await DROP_UNSTARTED.run(
      redis,
      [place.link, keys.run(link.runId), ...place.holders],
      [link.runId, place.field],
    );
  }

  async runningChildren(parentRunId: string): Promise<string[]> {
    const { redis, keys } = this.#context;
    return runningIn(await childStatesOf(redis, keys, parentRunId));
  }
}

/** A stored link, checked. */
export function parseLink(stored: string): RunLink {
  let value: unknown;
  try {
    value = JSON.parse(stored);
  } catch {
    value = undefined;
  }
  const parsed = RunLink.safeParse(value);
  if (!parsed.success) {
    throw new BackendError(`A stored run link does not parse: ${stored.slice(0, 200)}`, {
      code: "record_corrupt",
    });
  }
  return parsed.data;
}
