// Every value Redis holds for one test's prefix, as text: for canary scans ("this secret is in
// no key"), whatever the key's type and whoever wrote it (the run store, BullMQ's queues).
import { Redis } from "ioredis";
import { redisUrl } from "./redis.js";

/** Each key whose name holds `prefix`, with its whole value as JSON text. */
export async function valuesUnder(prefix: string, url = redisUrl()): Promise<Map<string, string>> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  const values = new Map<string, string>();
  try {
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `*${prefix}*`, "COUNT", 1000);
      cursor = next;
      for (const key of keys) values.set(key, JSON.stringify(await storedValue(client, key)));
    } while (cursor !== "0");
  } finally {
    client.disconnect();
  }
  return values;
}

async function storedValue(client: Redis, key: string): Promise<unknown> {
  const type = await client.type(key);
  switch (type) {
    case "string":
      return client.get(key);
    case "list":
      return client.lrange(key, 0, -1);
    case "hash":
      return client.hgetall(key);
    case "set":
      return client.smembers(key);
    case "zset":
      return client.zrange(key, 0, -1, "WITHSCORES");
    case "stream":
      return client.xrange(key, "-", "+");
    default:
      // Gone since the scan ("none"), or a type no test writes: fail loudly, never skip it.
      return type === "none" ? null : `unread type ${type}`;
  }
}

/** The keys whose value holds `text`. */
export async function keysHolding(prefix: string, text: string): Promise<string[]> {
  const values = await valuesUnder(prefix);
  return [...values].filter(([, value]) => value.includes(text)).map(([key]) => key);
}
