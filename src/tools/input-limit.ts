import type { ProviderResponse, ToolCall } from "../core/values.js";
import { errorResult } from "./run-handler.js";

// An input over the limit is replaced, where the model's response is first taken in, by this
// one-key object: the call then reaches validation as refused, and the run's record, events
// and recording keep the size, never the input.
const TOO_LARGE = "harnessx:inputTooLarge";

/** What stands in for an input that was over the limit. */
export interface OversizedInput {
  readonly [TOO_LARGE]: { readonly bytes: number; readonly maxBytes: number };
}

const sizeOf = (input: Record<string, unknown>) => Buffer.byteLength(JSON.stringify(input));

/**
 * `response` with every tool input bigger than `maxBytes` (as JSON, in UTF-8 bytes) replaced by
 * a note of its size, in the content blocks and the tool calls alike. A response within the
 * limit is returned as it is.
 */
export function capToolInputs(response: ProviderResponse, maxBytes: number): ProviderResponse {
  const capped = (input: Record<string, unknown>): Record<string, unknown> => {
    const bytes = sizeOf(input);
    return bytes <= maxBytes ? input : { [TOO_LARGE]: { bytes, maxBytes } };
  };
  let changed = false;
  const content = response.content.map((block) => {
    if (block.type !== "tool_use") return block;
    const input = capped(block.input);
    if (input === block.input) return block;
    changed = true;
    return { ...block, input };
  });
  const toolCalls = response.toolCalls.map((call) => {
    const input = capped(call.input);
    if (input === call.input) return call;
    changed = true;
    return { ...call, input };
  });
  return changed ? { ...response, content, toolCalls } : response;
}

/** The size note `capToolInputs` left in place of this call's input, if it did. */
export function oversizedInput(call: ToolCall): OversizedInput[typeof TOO_LARGE] | undefined {
  const keys = Object.keys(call.input);
  if (keys.length !== 1 || keys[0] !== TOO_LARGE) return undefined;
  const note = call.input[TOO_LARGE];
  if (typeof note !== "object" || note === null) return undefined;
  const { bytes, maxBytes } = note as Record<string, unknown>;
  return typeof bytes === "number" && typeof maxBytes === "number"
    ? { bytes, maxBytes }
    : undefined;
}

/** The error result of a call whose input was over the limit. */
export const inputTooLargeResult = (
  call: ToolCall,
  size: OversizedInput[typeof TOO_LARGE],
): ReturnType<typeof errorResult> =>
  errorResult(
    call.id,
    `The input of tool "${call.name}" was ${size.bytes} bytes, over the limit of ${size.maxBytes} bytes (limits.maxToolInputBytes); it was not run nor stored. Send a smaller input.`,
  );
