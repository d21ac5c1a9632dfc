/** One recorded answer the fake `fetch` serves, in order. */
export type FakeReply =
  /** A JSON body (an API answer or an API error body). @defaultValue status 200 */
  | { json: unknown; status?: number; headers?: Record<string, string> }
  /**
   * A server-sent-events body, sent in chunks of `chunkSize` characters. `end: "error"` breaks
   * the connection after the text instead of closing it cleanly.
   */
  | { sse: string; chunkSize?: number; end?: "close" | "error" }
  /** Never answers: the call waits until its signal aborts it. */
  | { hang: true };

/** A request as the SDK sent it; credentials are replaced by "[redacted]". */
export interface RecordedRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
}

export interface FakeFetchOptions {
  /** Starts again from the first reply when the replies run out (benchmarks, demos). @defaultValue false */
  loop?: boolean;
}

const CREDENTIAL_HEADERS = new Set(["authorization", "x-api-key", "api-key"]);

const sseStream = (
  text: string,
  chunkSize: number,
  end: "close" | "error",
  signal?: AbortSignal | null,
) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      const encoder = new TextEncoder();
      signal?.addEventListener("abort", () => controller.error(signal.reason), { once: true });
      for (let at = 0; at < text.length; at += chunkSize) {
        controller.enqueue(encoder.encode(text.slice(at, at + chunkSize)));
      }
      if (end === "error") controller.error(new TypeError("terminated: the connection was reset"));
      else controller.close();
    },
  });

/**
 * A `fetch` that serves recorded, real-shaped bodies and records what was sent: give it to an
 * official SDK client (`new OpenAI({ fetch: fake.fetch })`) to run a real provider adapter, SDK
 * included, without a network. Fails loudly on a call past its replies.
 */
export class FakeFetch {
  readonly requests: RecordedRequest[] = [];
  readonly #replies: readonly FakeReply[];
  readonly #loop: boolean;
  #next = 0;

  constructor(replies: readonly FakeReply[], options: FakeFetchOptions = {}) {
    this.#replies = replies;
    this.#loop = options.loop ?? false;
  }

  /** The `fetch` function to hand to an SDK client. */
  readonly fetch = async (
    input: string | URL | Request,
    init: RequestInit = {},
  ): Promise<Response> => {
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = CREDENTIAL_HEADERS.has(name) ? "[redacted]" : value;
    });
    const body = typeof init.body === "string" ? (JSON.parse(init.body) as unknown) : init.body;
    const url = input instanceof Request ? input.url : String(input);
    this.requests.push({ url, method: init.method ?? "GET", headers, body });
    if (this.#next >= this.#replies.length) {
      if (!this.#loop || this.#replies.length === 0) {
        throw new Error(
          `FakeFetch: unexpected request ${this.#next + 1} to ${url}; it has ${this.#replies.length} repl(ies).`,
        );
      }
      this.#next = 0;
    }
    const reply = this.#replies[this.#next++] as FakeReply;
    const signal = init.signal;
    signal?.throwIfAborted();
    if ("hang" in reply) {
      return new Promise<Response>((_resolve, reject) => {
        signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
    }
    if ("sse" in reply) {
      const stream = sseStream(reply.sse, reply.chunkSize ?? 64, reply.end ?? "close", signal);
      return new Response(stream, {
        status: 200,
        headers: { "content-type": "text/event-stream" },
      });
    }
    return new Response(JSON.stringify(reply.json), {
      status: reply.status ?? 200,
      headers: { "content-type": "application/json", ...reply.headers },
    });
  };

  /** Throws unless every reply was served. */
  assertComplete(): void {
    if (!this.#loop && this.#next < this.#replies.length) {
      throw new Error(
        `FakeFetch: ${this.#replies.length - this.#next} repl(ies) were never requested.`,
      );
    }
  }
}
