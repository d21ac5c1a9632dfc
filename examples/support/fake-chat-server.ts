// A stand-in for an OpenAI-compatible server (Ollama, vLLM, Groq…) on a local port, so the
// real-model examples run without a network. It answers in the Chat Completions wire format,
// with the quirks of the servers it imitates: tool calls without `index`, `reasoning` beside
// the content, no usage chunk unless asked, and a 400 for `prompt_cache_key`.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeChatServer {
  /** The base URL to give a client: `http://127.0.0.1:<port>/v1`. */
  url: string;
  /** The JSON bodies received, in order. */
  bodies: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: "chatcmpl-local",
  object: "chat.completion.chunk",
  created: 1756315700,
  model: "local-model",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** Answers the first request of a conversation with a tool call, the next with `answer`. */
export async function startFakeChatServer(answer: string): Promise<FakeChatServer> {
  const bodies: Array<Record<string, unknown>> = [];
  const server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on("data", (part: Buffer) => parts.push(part));
    request.on("end", () => {
      const body = JSON.parse(Buffer.concat(parts).toString("utf8")) as Record<string, unknown>;
      bodies.push(body);
      if ("prompt_cache_key" in body) {
        response.writeHead(400, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { message: "Extra inputs are not permitted" } }));
        return;
      }
      const messages = body.messages as Array<{ role: string }>;
      const answered = messages.some((message) => message.role === "tool");
      const call = {
        id: "call_local_1",
        type: "function",
        function: { name: "get_weather", arguments: '{"city":"Lisbon"}' },
      };
      if (body.stream === true) {
        response.writeHead(200, { "content-type": "text/event-stream" });
        const events = answered
          ? [chunk({ reasoning: "The tool said sunny." }), chunk({ content: answer }, "stop")]
          : [chunk({ tool_calls: [call] }), chunk({}, "tool_calls")];
        for (const event of events) response.write(`data: ${JSON.stringify(event)}\n\n`);
        response.end("data: [DONE]\n\n");
        return;
      }
      const message = answered
        ? { role: "assistant", content: answer, reasoning: "The tool said sunny." }
        : { role: "assistant", content: null, tool_calls: [call] };
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          id: "chatcmpl-local",
          object: "chat.completion",
          created: 1756315700,
          model: "local-model",
          choices: [{ index: 0, message, finish_reason: answered ? "stop" : "tool_calls" }],
          usage: { prompt_tokens: 120, completion_tokens: 12, total_tokens: 132 },
        }),
      );
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
