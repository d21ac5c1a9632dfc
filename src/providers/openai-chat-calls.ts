import { ProviderError } from "../core/errors.js";
import { randomUUID } from "../core/node-crypto.js";

/** One tool call of a chat completion, as its chunks assemble it. */
export interface AssembledCall {
  id: string;
  name: string;
  arguments: string;
}

/** A tool-call fragment of a stream chunk, as OpenAI-compatible servers really send it. */
export interface CallPart {
  index?: number | null | undefined;
  id?: string | null | undefined;
  function?: { name?: string | null | undefined; arguments?: string | null | undefined } | null;
}

const isCompleteObject = (json: string): boolean => {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
};

/**
 * Assembles streamed tool calls the way OpenAI sends them (fragments keyed by `index`) and the way
 * compatible servers do: without `index` (Gemini), a fragment joins the call with its id, or the
 * current call, or opens the next one when it names a tool after complete arguments; a function
 * name repeated in every chunk (NIM) is taken once.
 */
export class ToolCallAssembler {
  readonly #calls: AssembledCall[] = [];
  readonly #byIndex = new Map<number, AssembledCall>();

  add(part: CallPart): void {
    const call = this.#target(part);
    if (part.id && call.id === "") call.id = part.id;
    const name = part.function?.name;
    // A name is sent once by OpenAI; a repeat of the whole name is the same call's, not more of it.
    if (name && name !== call.name) call.name += name;
    if (part.function?.arguments) call.arguments += part.function.arguments;
  }

  #target(part: CallPart): AssembledCall {
    if (typeof part.index === "number") {
      const known = this.#byIndex.get(part.index);
      if (known !== undefined) return known;
      const withId = part.id ? this.#calls.find((call) => call.id === part.id) : undefined;
      const call = withId ?? this.#open();
      this.#byIndex.set(part.index, call);
      return call;
    }
    if (part.id) return this.#calls.find((call) => call.id === part.id) ?? this.#open();
    const current = this.#calls.at(-1);
    const startsAnother =
      current !== undefined &&
      Boolean(part.function?.name) &&
      current.arguments !== "" &&
      isCompleteObject(current.arguments);
    return current === undefined || startsAnother ? this.#open() : current;
  }

  #open(): AssembledCall {
    const call = { id: "", name: "", arguments: "" };
    this.#calls.push(call);
    return call;
  }

  /** The calls in order, each with an id (one made up where the server sent none). */
  calls(provider: string): AssembledCall[] {
    return this.#calls.map((call) => completeCall(call, provider));
  }
}

/**
 * A call as the run keeps it: a server that sent no id gets one made up; one without a name
 * cannot be run or answered, so it fails the run rather than being dropped.
 */
export function completeCall(call: AssembledCall, provider: string): AssembledCall {
  if (call.name === "") {
    throw new ProviderError(
      `${provider} returned a tool call without a function name (arguments: ${JSON.stringify(call.arguments.slice(0, 80))}).`,
      { phase: "provider", retryable: true },
    );
  }
  return call.id === "" ? { ...call, id: `call_${randomUUID().replaceAll("-", "")}` } : call;
}
