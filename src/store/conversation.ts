import type { Message } from "../core/values.js";
import type { RunRecord } from "./schemas.js";

/** The conversation a record holds: its message log once started, else the input's. */
export function conversationOf(record: RunRecord): readonly Message[] {
  return record.messages ?? record.input.messages;
}
