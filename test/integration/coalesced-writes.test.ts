// Commands a connection sends in one go leave in one socket write (`coalesceWrites`), in order,
// on real Redis: counted at the socket's writable side (`_write` / `_writev`).
import type { Socket } from "node:net";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { coalesceWrites } from "../../src/runtime/coalesced-writes.js";
import { redisUrl, requireRedis } from "./redis.js";

const clients: Redis[] = [];

afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect();
});

async function connected(coalesced: boolean): Promise<Redis> {
  await requireRedis();
  const client = new Redis(redisUrl(), { lazyConnect: true });
  clients.push(client);
  if (coalesced) coalesceWrites(client);
  await client.connect();
  return client;
}

/** Counts the socket's writes from now on: one per `_write` or `_writev` call. */
function countWrites(client: Redis): { writes: number; chunks: number } {
  const socket = client.stream as Socket & {
    _write: (...args: unknown[]) => void;
    _writev?: (chunks: unknown[], ...rest: unknown[]) => void;
  };
  const counts = { writes: 0, chunks: 0 };
  const write = socket._write.bind(socket);
  socket._write = (...args) => {
    counts.writes += 1;
    counts.chunks += 1;
    write(...args);
  };
  const writev = socket._writev?.bind(socket);
  if (writev !== undefined) {
    socket._writev = (chunks, ...rest) => {
      counts.writes += 1;
      counts.chunks += chunks.length;
      writev(chunks, ...rest);
    };
  }
  return counts;
}

const key = `hx-coalesce-${process.pid}`;

describe("coalesceWrites", () => {
  it("sends the commands issued together in one write, in order", async () => {
    const client = await connected(true);
    const counts = countWrites(client);
    const replies = await Promise.all([
      client.del(key),
      client.rpush(key, "a"),
      client.rpush(key, "b"),
      client.lrange(key, 0, -1),
      client.del(key),
    ]);
    expect(replies).toEqual([0, 1, 2, ["a", "b"], 1]);
    expect(counts).toEqual({ writes: 1, chunks: 5 });
  });

  it("leaves a plain connection writing each command on its own", async () => {
    const client = await connected(false);
    const counts = countWrites(client);
    await Promise.all([client.ping(), client.ping(), client.ping()]);
    expect(counts.writes).toBe(3);
  });

  it("sends the commands of separate callbacks of one loop turn in one write", async () => {
    const client = await connected(true);
    const counts = countWrites(client);
    // Two immediates of one turn, as two sockets' reads are two callbacks of one poll phase.
    const replies = await new Promise<string[]>((resolve, reject) => {
      let first: Promise<string> | undefined;
      setImmediate(() => {
        first = client.ping();
      });
      setImmediate(() => {
        Promise.all([first as Promise<string>, client.echo("second")]).then(resolve, reject);
      });
    });
    expect(replies).toEqual(["PONG", "second"]);
    expect(counts).toEqual({ writes: 1, chunks: 2 });
  });

  it("has the batch out by the next turn, before a continuation waiting on it runs", async () => {
    const client = await connected(true);
    const socket = client.stream as Socket;
    const sent = client.ping();
    expect(socket.writableCorked).toBe(1);
    await Promise.resolve();
    expect(socket.writableCorked).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(socket.writableCorked).toBe(0);
    expect(await sent).toBe("PONG");
  });

  it("coalesces on a new socket after a reconnect", async () => {
    const client = await connected(true);
    const before = client.stream;
    const ready = new Promise((resolve) => client.once("ready", resolve));
    before.destroy();
    await ready;
    expect(client.stream).not.toBe(before);
    const counts = countWrites(client);
    expect(await Promise.all([client.ping(), client.ping(), client.echo("x")])).toEqual([
      "PONG",
      "PONG",
      "x",
    ]);
    expect(counts).toEqual({ writes: 1, chunks: 3 });
  });
});
