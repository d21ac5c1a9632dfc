// Reads a Server-Sent Events response from Node's fetch, one event at a time.
export interface SseMessage {
  event: string;
  data: unknown;
  id?: string;
}

export async function* sseMessages(response: Response): AsyncGenerator<SseMessage> {
  if (response.body === null) return;
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf("\n\n");
      const fields = new Map<string, string>();
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const at = line.indexOf(": ");
        if (at > 0) fields.set(line.slice(0, at), line.slice(at + 2));
      }
      const data = fields.get("data");
      if (data === undefined) continue;
      const id = fields.get("id");
      yield {
        event: fields.get("event") ?? "message",
        data: JSON.parse(data),
        ...(id === undefined ? {} : { id }),
      };
    }
  }
}
