import type { Socket } from "node:net";
import { Cluster, type Redis } from "./load-ioredis.js";
import type { RedisClient } from "./redis-connection.js";

const coalescing = new WeakSet<Socket>();

/**
 * Makes the commands `client` sends in one turn of the event loop leave in one socket write:
 * the socket is corked at the first write and uncorked by a `setImmediate` queued then, so that
 * every callback of the turn writes into the same batch: the continuations of the replies one
 * socket read resolved, and those of the other connections' reads and of the timers due. A
 * continuation that waits on a command's reply runs after the batch has left the process, and
 * so does an immediate queued after the command was written (`afterWritesLeave`). Redis still
 * receives the commands in order, on the same connection: nothing changes but the number of
 * system calls, here and on the server (which also reads them, and answers, in one go). Unlike
 * ioredis's `enableAutoPipelining`, commands are not regrouped, so BullMQ's scripts run as they
 * always do.
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
      setImmediate(uncork);
    }
    return write.apply(this, args);
  } as Socket["write"];
}
