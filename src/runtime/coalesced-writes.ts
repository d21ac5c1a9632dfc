import type { Socket } from "node:net";
import { Cluster, type Redis } from "ioredis";
import type { RedisClient } from "./redis-connection.js";

const coalescing = new WeakSet<Socket>();

/**
 * Makes the commands `client` sends in one go leave in one socket write: the socket is corked
 * at the first write and uncorked in a microtask queued then, so that every continuation
 * already queued (say, those of the replies that one socket read resolved) writes into the
 * same batch. A continuation that waits on a command's promise, or on anything settled after
 * the command was written, runs after the batch has left the process. Redis still receives the
 * commands in order, on the same connection: nothing changes but the number of system calls,
 * here and on the server (which also reads them, and answers, in one go). Unlike ioredis's
 * `enableAutoPipelining`, commands are not regrouped, so BullMQ's scripts run as they always do.
 */
export function coalesceWrites(client: RedisClient): void {
  if (client instanceof Cluster) {
    client.on("+node", (node: Redis) => coalesceWrites(node));
    for (const node of client.nodes()) coalesceWrites(node);
    return;
  }
  const patch = () => {
    const socket = client.stream;
    if (!(socket instanceof Object) || coalescing.has(socket as Socket)) return;
    coalescing.add(socket as Socket);
    corkPerTick(socket as Socket);
  };
  client.on("connect", patch);
  patch();
}

function corkPerTick(socket: Socket): void {
  const write = socket.write;
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  socket.write = function (this: Socket, ...args: Parameters<Socket["write"]>) {
    if (!corked && !socket.destroyed) {
      corked = true;
      socket.cork();
      queueMicrotask(uncork);
    }
    return write.apply(this, args);
  } as Socket["write"];
}
