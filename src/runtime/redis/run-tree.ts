import { BackendError, LeaseLostError } from "../../store/errors.js";
import { RunLink, type RunTree } from "../../store/run-tree.js";
import { LuaScript } from "../redis-scripts.js";
import type { RedisContext } from "./context.js";

// The children a parent waits for: a hash per parent (`tree:wait:<parent>`), each child's id
// to "1" (running) or "0" (finished), and the field "" (never a run id: ids are not empty) to
// how many run. A released child is not in it. The hash goes once none runs.

/**
 * The Lua block recording link ARGV[at] (JSON), ARGV[at + 1] (child id), ARGV[at + 2]
 * (createdAt) at key `link` unless it is there, under its parent's children (`kids`) and its
 * root's runs (`root`), sorted sets by creation; sets the local `linked` to 1 when it did.
 */
const recordLinkLua = (link: string, kids: string, root: string, at: string) => `
linked = 0
if redis.call("SET", ${link}, ARGV[${at}], "NX") then
  redis.call("ZADD", ${kids}, ARGV[${at} + 2], ARGV[${at} + 1])
  redis.call("ZADD", ${root}, ARGV[${at} + 2], ARGV[${at} + 1])
  linked = 1
end
`;

/**
 * KEYS: the parent's run hash, its waits, its children, the root's runs, then each child's
 * link. ARGV: the parent's lease token, then each child's link JSON, id and creation time.
 * Refused (-1) unless the token is the parent's newest (its hash's `fence`, as SAVE_RUN checks
 * it); else records every link and makes these children exactly the running ones. Returns how
 * many run.
 */
const WAIT_FOR_CHILDREN = new LuaScript(`
if redis.call("HGET", KEYS[1], "fence") ~= ARGV[1] then return -1 end
redis.call("DEL", KEYS[2])
local running = 0
local linked = 0
for index = 5, #KEYS do
  local at = 2 + (index - 5) * 3
  ${recordLinkLua("KEYS[index]", "KEYS[3]", "KEYS[4]", "at")}
  if redis.call("HSETNX", KEYS[2], ARGV[at + 1], "1") == 1 then running = running + 1 end
end
if running > 0 then redis.call("HSET", KEYS[2], "", running) end
return running
`);

/**
 * KEYS: the child's link, the parent's children, the root's runs, the parent's waits.
 * ARGV: the link's JSON, the child's id, its creation time. Counts the child as running unless
 * it is counted or finished. Returns 1 when it recorded the link, 0 when it was there.
 */
const LINK_CHILD = new LuaScript(`
local linked = 0
${recordLinkLua("KEYS[1]", "KEYS[2]", "KEYS[3]", "1")}
if redis.call("HSETNX", KEYS[4], ARGV[2], "1") == 1 then redis.call("HINCRBY", KEYS[4], "", 1) end
return linked
`);

/**
 * KEYS: the parent's waits. ARGV: the child's id, "1" when it finished ("" when released).
 * A running child turns finished (or, released, leaves the hash) and no longer counts. Returns
 * 1 when no child runs any more (the hash is gone then). One key only: atomic wherever the
 * parent's key lives.
 */
const CHILD_DONE = new LuaScript(`
if redis.call("HGET", KEYS[1], ARGV[1]) == "1" then
  if ARGV[2] == "1" then redis.call("HSET", KEYS[1], ARGV[1], "0")
  else redis.call("HDEL", KEYS[1], ARGV[1]) end
  if redis.call("HINCRBY", KEYS[1], "", -1) <= 0 then redis.call("DEL", KEYS[1]) end
end
if tonumber(redis.call("HGET", KEYS[1], "") or "0") > 0 then return 0 end
return 1
`);

/**
 * The run tree in Redis, under the backend's prefix. On a Cluster every key here shares the
 * prefix's hash slot (`{hx}`) with the runs' own, so linking a child, or a turn's children
 * fenced by the parent's lease, is one script. The parent's wake-up does not depend on that:
 * it is decided by one script on one key (the children the parent waits for), and
 * what it wakes the parent for is committed first-write-wins into the parent's raw results, so
 * repeating it after a crash commits nothing twice and at most steps the parent again (a step
 * is a wake-up the run takes in any state).
 */
export class RedisRunTree implements RunTree {
  readonly #context: RedisContext;

  constructor(context: RedisContext) {
    this.#context = context;
  }

  #key(kind: TreeKeyKind, runId: string): string {
    return treeKey(this.#context.prefix, kind, runId);
  }

  async waitForChildren(
    parentRunId: string,
    token: number,
    links: readonly RunLink[],
  ): Promise<void> {
    const [first] = links;
    const root = first?.rootRunId ?? parentRunId;
    const reply = await WAIT_FOR_CHILDREN.run(
      this.#context.redis,
      [
        this.#context.keys.run(parentRunId),
        this.#key("wait", parentRunId),
        this.#key("kids", parentRunId),
        this.#key("root", root),
        ...links.map((link) => this.#key("link", link.runId)),
      ],
      [token, ...links.flatMap((link) => [JSON.stringify(link), link.runId, link.createdAt])],
    );
    if (reply === -1) throw new LeaseLostError(parentRunId, token);
  }

  async linkChild(link: RunLink): Promise<boolean> {
    const linked = await LINK_CHILD.run(
      this.#context.redis,
      [
        this.#key("link", link.runId),
        this.#key("kids", link.parentRunId),
        this.#key("root", link.rootRunId),
        this.#key("wait", link.parentRunId),
      ],
      [JSON.stringify(link), link.runId, link.createdAt],
    );
    return linked === 1;
  }

  async linkOf(runId: string): Promise<RunLink | undefined> {
    const stored = await this.#context.redis.get(this.#key("link", runId));
    return stored === null ? undefined : parseLink(stored);
  }

  async childrenOf(parentRunId: string): Promise<RunLink[]> {
    return this.#linksIn(this.#key("kids", parentRunId));
  }

  async descendantsOf(rootRunId: string): Promise<RunLink[]> {
    return this.#linksIn(this.#key("root", rootRunId));
  }

  async #linksIn(key: string): Promise<RunLink[]> {
    const { redis } = this.#context;
    const ids = await redis.zrange(key, 0, -1);
    if (ids.length === 0) return [];
    const stored = await redis.mget(...ids.map((id) => this.#key("link", id)));
    return stored.flatMap((each) => (each === null ? [] : [parseLink(each)]));
  }

  async childFinished(link: RunLink): Promise<boolean> {
    const none = await CHILD_DONE.run(
      this.#context.redis,
      [this.#key("wait", link.parentRunId)],
      [link.runId, "1"],
    );
    return none === 1;
  }

  async releaseChild(link: Pick<RunLink, "runId" | "parentRunId">): Promise<void> {
    await CHILD_DONE.run(
      this.#context.redis,
      [this.#key("wait", link.parentRunId)],
      [link.runId, ""],
    );
  }

  async runningChildren(parentRunId: string): Promise<string[]> {
    return runningIn(await this.#context.redis.hgetall(this.#key("wait", parentRunId)));
  }
}

/** The kinds of keys of the run tree: a child's link, a parent's children and waits, a root's runs. */
export type TreeKeyKind = "link" | "kids" | "root" | "wait";

/** A key of the run tree under `prefix` (in its slot when the prefix is in braces). */
export const treeKey = (prefix: string, kind: TreeKeyKind, runId: string): string =>
  `${prefix}:tree:${kind}:${runId}`;

/** The running children of a parent's waits hash, as HGETALL reads it. */
export const runningIn = (waits: Record<string, string>): string[] =>
  Object.entries(waits)
    .filter(([runId, state]) => runId !== "" && state === "1")
    .map(([runId]) => runId);

function parseLink(stored: string): RunLink {
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
