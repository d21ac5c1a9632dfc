import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.js";
import type { Message } from "../core/values.js";
import { RecorderEntry } from "../features/recorder/entry.js";
import { describeIssues } from "../tools/validate.js";
import { BackendError } from "./errors.js";

/**
 * How a stored `llm_request` says that its first `messages` messages are those of the
 * request stored at position `entry` of the same recording: successive requests of a run
 * repeat the whole conversation, and storing it each time would grow a recording with the
 * square of its length.
 */
const SharedPrefix = lazySchema(() =>
  z.object({
    entry: z.number().int().nonnegative(),
    messages: z.number().int().positive(),
  }),
);

/** Requests remembered per writer: the runs recorded least recently are forgotten first. */
const REMEMBERED_RUNS = 1000;

interface LastRequest {
  /** Its position in the run's recording. */
  position: number;
  messages: readonly Message[];
}

/** What to store for one entry, and what to remember once its position is known. */
export interface EncodedEntry {
  json: string;
  /** Call with the entry's position in the recording once it is stored. */
  stored(position: number): void;
}

// Messages are immutable by contract: each one's JSON is computed once.
const jsonOfMessage = new WeakMap<Message, string>();
function messageJson(message: Message): string {
  let json = jsonOfMessage.get(message);
  if (json === undefined) {
    json = JSON.stringify(message);
    jsonOfMessage.set(message, json);
  }
  return json;
}

/** How many leading messages `next` shares with `previous`. */
function sharedPrefix(previous: readonly Message[], next: readonly Message[]): number {
  const limit = Math.min(previous.length, next.length);
  let index = 0;
  while (index < limit) {
    const [a, b] = [previous[index] as Message, next[index] as Message];
    if (a !== b && messageJson(a) !== messageJson(b)) break;
    index++;
  }
  return index;
}

/**
 * Encodes the entries a backend appends to run recordings. It remembers, per run, the last
 * request it stored, and stores a later request's messages from where they differ (a request
 * stored by another process is not known here, so the next one is stored whole: correct, only
 * bigger).
 */
export class RecordingWriter {
  readonly #last = new Map<string, LastRequest>();

  encode(runId: string, entry: RecorderEntry): EncodedEntry {
    if (entry.type !== "llm_request") {
      return { json: JSON.stringify(entry), stored: () => {} };
    }
    const { messages } = entry.request;
    const remember = (position: number) => {
      this.#last.delete(runId);
      this.#last.set(runId, { position, messages });
      if (this.#last.size > REMEMBERED_RUNS) {
        this.#last.delete(this.#last.keys().next().value as string);
      }
    };
    const last = this.#last.get(runId);
    const shared = last === undefined ? 0 : sharedPrefix(last.messages, messages);
    if (last === undefined || shared === 0)
      return { json: JSON.stringify(entry), stored: remember };
    const stored = {
      ...entry,
      request: { ...entry.request, messages: messages.slice(shared) },
      base: { entry: last.position, messages: shared },
    };
    return { json: JSON.stringify(stored), stored: remember };
  }

  /** Forgets a run (it was pruned). */
  forget(runId: string): void {
    this.#last.delete(runId);
  }
}

/**
 * Reads a stored recording (`runId` names it in errors): every entry is parsed and checked, and
 * requests stored from where they differ are made whole again. A recording that does not
 * parse is refused with `BackendError`, never misread.
 */
export function decodeRecording(runId: string, stored: readonly string[]): RecorderEntry[] {
  const entries: RecorderEntry[] = [];
  for (const [position, json] of stored.entries()) {
    const where = `Entry ${position} of the recording of run "${runId}"`;
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch (error) {
      throw new BackendError(`${where} is not valid JSON.`, { cause: error });
    }
    const parsed = RecorderEntry.safeParse(withSharedPrefix(value, entries, where));
    if (!parsed.success) {
      throw new BackendError(`${where} does not parse: ${describeIssues(parsed.error.issues)}`);
    }
    entries.push(parsed.data);
  }
  return entries;
}

/** `value` with the messages its `base` names put back in front of its own. */
function withSharedPrefix(
  value: unknown,
  before: readonly RecorderEntry[],
  where: string,
): unknown {
  if (typeof value !== "object" || value === null || !("base" in value)) return value;
  const { base, ...entry } = value as { base: unknown; request?: { messages?: unknown } };
  const prefix = SharedPrefix.safeParse(base);
  const earlier = prefix.success ? before[prefix.data.entry] : undefined;
  const own = entry.request?.messages;
  if (
    !prefix.success ||
    earlier?.type !== "llm_request" ||
    earlier.request.messages.length < prefix.data.messages ||
    !Array.isArray(own)
  ) {
    throw new BackendError(`${where} refers to messages the recording does not hold.`);
  }
  const messages = [...earlier.request.messages.slice(0, prefix.data.messages), ...own];
  return { ...entry, request: { ...entry.request, messages } };
}
