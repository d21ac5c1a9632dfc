import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One answer the server gives, in order. */
export type ServerReply =
  | { json: unknown; status?: number; headers?: Record<string, string> }
  /** Server-sent events: each string is one event's data (OpenAI style, `[DONE]` appended). */
  | { chunks: readonly unknown[]; done?: boolean }
  /** Server-sent events with names (Anthropic, Responses API): `event: <type>`. */
  | { events: ReadonlyArray<{ type: string; [field: string]: unknown }> };

/** A request as it reached the server over HTTP. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

export interface CompatServerOptions {
  /**
   * Body fields the server refuses with a 400, the way Groq, Cerebras, NIM and Azure Foundry
   * answer a field they do not know.
   */
  rejectFields?: readonly string[];
}

/**
 * A real local HTTP server speaking the OpenAI / Anthropic wire formats as compatible servers do,
 * quirks included: the official SDKs talk to it over real HTTP through their `baseURL`.
 */
export class CompatServer {
  readonly requests: ReceivedRequest[] = [];
  readonly #server: Server;
  readonly #replies: ServerReply[] = [];
  readonly #rejectFields: readonly string[];

  private constructor(options: CompatServerOptions) {
    this.#rejectFields = options.rejectFields ?? [];
    this.#server = createServer((request, response) => {
      const parts: Buffer[] = [];
      request.on("data", (part: Buffer) => parts.push(part));
      request.on("end", () => {
        const text = Buffer.concat(parts).toString("utf8");
        const body = (text === "" ? {} : JSON.parse(text)) as Record<string, unknown>;
        this.requests.push({
          method: request.method ?? "GET",
          path: request.url ?? "/",
          headers: request.headers,
          body,
        });
        const unknown = this.#rejectFields.find((field) => field in body);
        if (unknown !== undefined) {
          response.writeHead(400, { "content-type": "application/json" });
          response.end(
            JSON.stringify({
              error: {
                message: `[{'type': 'extra_forbidden', 'loc': ('body', '${unknown}'), 'msg': 'Extra inputs are not permitted'}]`,
                type: "invalid_request_error",
              },
            }),
          );
          return;
        }
        const reply = this.#replies.shift();
        if (reply === undefined) {
          response.writeHead(500, { "content-type": "application/json" });
          response.end(JSON.stringify({ error: { message: "CompatServer: no reply left" } }));
          return;
        }
        if ("json" in reply) {
          response.writeHead(reply.status ?? 200, {
            "content-type": "application/json",
            ...reply.headers,
          });
          response.end(JSON.stringify(reply.json));
          return;
        }
        response.writeHead(200, { "content-type": "text/event-stream" });
        if ("chunks" in reply) {
          for (const chunk of reply.chunks) response.write(`data: ${JSON.stringify(chunk)}\n\n`);
          if (reply.done ?? true) response.write("data: [DONE]\n\n");
        } else {
          for (const event of reply.events) {
            response.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
          }
        }
        response.end();
      });
    });
  }

  /** Starts a server on a free local port. */
  static async start(options: CompatServerOptions = {}): Promise<CompatServer> {
    const server = new CompatServer(options);
    server.#server.listen(0, "127.0.0.1");
    await once(server.#server, "listening");
    return server;
  }

  /** The base URL an OpenAI client takes (`…/v1`). */
  get url(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/v1`;
  }

  /** The base URL an Anthropic client takes (it adds `/v1` itself). */
  get root(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Queues answers for the next requests. */
  reply(...replies: ServerReply[]): this {
    this.#replies.push(...replies);
    return this;
  }

  /** The body of the request at `index`. */
  body(index: number): Record<string, unknown> {
    const received = this.requests[index];
    if (received === undefined) throw new Error(`CompatServer: no request ${index}`);
    return received.body;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** A Chat Completions stream chunk of one choice. */
export function chatChunk(
  delta: Record<string, unknown>,
  options: { finish?: string | null; model?: string; usage?: unknown } = {},
): Record<string, unknown> {
  return {
    id: "chatcmpl-compat",
    object: "chat.completion.chunk",
    created: 1756315700,
    model: options.model ?? "compat-model",
    choices: [{ index: 0, delta, finish_reason: options.finish ?? null }],
    ...(options.usage === undefined ? {} : { usage: options.usage }),
  };
}

/** The usage chunk OpenAI sends last with `stream_options.include_usage`. */
export function usageChunk(prompt: number, completion: number): Record<string, unknown> {
  return {
    id: "chatcmpl-compat",
    object: "chat.completion.chunk",
    created: 1756315700,
    model: "compat-model",
    choices: [],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
    },
  };
}

/** A complete (non-streamed) chat completion with one choice. */
export function chatCompletion(
  message: Record<string, unknown>,
  finish = "stop",
  usage: unknown = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
): Record<string, unknown> {
  return {
    id: "chatcmpl-compat",
    object: "chat.completion",
    created: 1756315700,
    model: "compat-model",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
    usage,
  };
}
