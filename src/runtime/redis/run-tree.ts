import { BackendError } from "../../store/errors.js";
import { RunLink, type RunTree } from "../../store/run-tree.js";
import { LuaScript } from "../redis-scripts.js";
import type { RedisContext } from "./context.js";

/**
 * KEYS: the child's link, the parent's children (sorted set by creation), the root's runs
 * (the same), the parent's running children (a set). ARGV: the link's JSON, the child's id, its
 * creation time. Returns 1 when it linked the child, 0 when it was linked before.
 */
const LINK_CHILD = new LuaScript(`
if redis.call("SET", KEYS[1], ARGV[1], "NX") == false then return 0 end
redis.call("ZADD", KEYS[2], ARGV[3], ARGV[2])
redis.call("ZADD", KEYS[3], ARGV[3], ARGV[2])
redis.call("SADD", KEYS[4], ARGV[2])
return 1
`);

/**
 * KEYS: the parent's running children. ARGV: the child's id. Returns 1 when no child runs any
 * more. One key only: atomic wherever the parent's key lives.
 */
const CHILD_FINISHED = new LuaScript(`
redis.call("SREM", KEYS[1], ARGV[1])
if redis.call("SCARD", KEYS[1]) == 0 then return 1 end
return 0
`);

/**
 * The run tree in Redis, under the backend's prefix. On a Cluster every key here shares the
 * prefix's hash slot (`{hx}`), so linking a child is one script. The parent's wake-up does not
 * depend on that: it is decided by one script on one key (the parent's running children), and
 * what it wakes the parent for is committed first-write-wins into the parent's raw results, so
 * repeating it after a crash commits nothing twice and at most steps the parent again (a step
 * is a wake-up the run takes in any state).
 */
export class RedisRunTree implements RunTree {
  readonly #context: RedisContext;

  constructor(context: RedisContext) {
    this.#context = context;
  }

  #key(kind: "link" | "kids" | "root" | "wait", runId: string): string {
    return `${this.#context.prefix}:tree:${kind}:${runId}`;
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
    const none = await CHILD_FINISHED.run(
      this.#context.redis,
      [this.#key("wait", link.parentRunId)],
      [link.runId],
    );
    return none === 1;
  }

  async runningChildren(parentRunId: string): Promise<string[]> {
    return this.#context.redis.smembers(this.#key("wait", parentRunId));
  }
}

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
