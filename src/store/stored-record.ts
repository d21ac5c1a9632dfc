import { messageOf } from "../core/errors.js";
import type { Message } from "../core/values.js";
import { corrupt, parseRecordValue } from "./record-codec.js";
import type { RunRecord } from "./schemas.js";

// A run record is stored in two parts, so that storage grows with the conversation and not with
// its square: the conversation as an append-only list of messages (each written once), and the
// rest of the record as one small document in which every copy of the conversation (the
// input's, the machine context's, the result's) is left out and restored from the list on load.

/** The conversation a record holds: the machine's once started, else the input's. */
export function conversationOf(record: RunRecord): readonly Message[] {
  const context = record.snapshot?.context as { messages?: Message[] } | undefined;
  return context?.messages ?? record.input.messages;
}

/** The record without its conversation, as JSON. */
export function recordDocument(record: RunRecord): string {
  const { snapshot, result } = record;
  const document = {
    ...record,
    input: { ...record.input, messages: record.input.messages.length },
    snapshot:
      snapshot === null
        ? null
        : {
            ...snapshot,
            context: { ...snapshot.context, messages: conversationOf(record).length },
          },
    result: result === null ? null : { ...result, messages: result.messages.length },
  };
  return JSON.stringify(document);
}

/** A record rebuilt from its document and the stored conversation (JSON of each message). */
export function joinRecord(document: string, conversation: readonly string[]): RunRecord {
  let parsedDocument: unknown;
  let messages: unknown[];
  try {
    parsedDocument = JSON.parse(document);
    messages = conversation.map((json) => JSON.parse(json) as unknown);
  } catch (error) {
    throw corrupt("A stored run record", `not valid JSON (${messageOf(error)})`);
  }
  if (typeof parsedDocument !== "object" || parsedDocument === null) {
    throw corrupt("A stored run record", "not a JSON object");
  }
  const stored = parsedDocument as {
    input?: { messages?: unknown };
    snapshot?: { context?: { messages?: unknown } } | null;
    result?: { messages?: unknown } | null;
  };
  const prefix = (length: unknown): unknown[] =>
    typeof length === "number" ? messages.slice(0, length) : [];
  const joined = {
    ...stored,
    input: { ...stored.input, messages: prefix(stored.input?.messages) },
    snapshot:
      stored.snapshot == null
        ? null
        : {
            ...stored.snapshot,
            context: {
              ...stored.snapshot.context,
              messages: prefix(stored.snapshot.context?.messages),
            },
          },
    result:
      stored.result == null ? null : { ...stored.result, messages: prefix(stored.result.messages) },
  };
  return parseRecordValue(joined);
}
