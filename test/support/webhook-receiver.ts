// A real webhook receiver on loopback (node:http) for the approval-webhook tests: it keeps every
// delivery (raw body and headers) and answers as told: 200, an error status, never (hangs), or
// not at all (stopped: connections are refused).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface Delivery {
  body: string;
  headers: IncomingHttpHeaders;
  at: number;
}

/** How the receiver answers the next delivery: a status, or "hang" (no answer at all). */
export type Answer = number | "hang";

export interface WebhookReceiver {
  url: string;
  deliveries: Delivery[];
  /** Answers to give, in order, before answering 200 to every delivery after them. */
  answers: Answer[];
  /** Resolves once `count` deliveries arrived. */
  received(count: number): Promise<Delivery[]>;
  /** Stops listening (deliveries are refused) and cuts open connections. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
}

export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  const deliveries: Delivery[] = [];
  const waiters = new Set<() => void>();
  const hanging = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  const receiver: WebhookReceiver = {
    url: "",
    deliveries,
    answers: [],
    async received(count) {
      while (deliveries.length < count) {
        await new Promise<void>((resolve) => waiters.add(resolve));
      }
      return deliveries.slice(0, count);
    },
    stop: async () => {},
    restart: async () => {},
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      deliveries.push({
        body: Buffer.concat(chunks).toString(),
        headers: request.headers,
        at: Date.now(),
      });
      for (const wake of [...waiters]) wake();
      waiters.clear();
      const answer = receiver.answers.shift() ?? 200;
      if (answer === "hang") {
        hanging.add(response);
        return;
      }
      response.writeHead(answer).end();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  const listen = (at: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(at, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
    });
  const bound = await listen(port);
  receiver.url = `http://127.0.0.1:${bound}/hooks/approvals`;
  receiver.stop = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    hanging.clear();
    await closed;
  };
  receiver.restart = async () => {
    await listen(bound);
  };
  return receiver;
}
