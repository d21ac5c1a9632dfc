import type { ToolResult } from "../core/values.js";

/** The default of the size limits (run input, tool input, tool result): 1 MB. */
export const DEFAULT_MAX_BYTES = 1_048_576;

/** The size limits a run's tool calls keep, in UTF-8 bytes (SPEC §8 `limits`). */
export interface ToolLimits {
  /** A tool call's input from the model, as JSON; a bigger one gets an error result. */
  maxToolInputBytes: number;
  /** A handler's raw result content; a bigger one is cut and marked. */
  maxToolResultBytes: number;
}

/** The limits of a direct run, and of a runtime that sets none. */
export const DEFAULT_TOOL_LIMITS: ToolLimits = {
  maxToolInputBytes: DEFAULT_MAX_BYTES,
  maxToolResultBytes: DEFAULT_MAX_BYTES,
};

const encoder = new TextEncoder();

/** The note a cut result ends with, so that the model knows it reads a part. */
const cutNote = (bytes: number, maxBytes: number) =>
  `\n[harnessx: this tool result was cut: it was ${bytes} bytes, over the limit of ${maxBytes} bytes; the rest is not shown]`;

/**
 * `result` with its content cut to at most `maxBytes` UTF-8 bytes, note included, when it is
 * bigger: the cut falls between characters (never inside one, nor between a surrogate pair),
 * so the content stays a valid string that round-trips through JSON. Smaller results are
 * returned as they are.
 */
export function capToolResult(result: ToolResult, maxBytes: number): ToolResult {
  const bytes = Buffer.byteLength(result.content);
  if (bytes <= maxBytes) return result;
  const note = cutNote(bytes, maxBytes);
  const room = Math.max(0, maxBytes - Buffer.byteLength(note));
  // encodeInto writes whole characters only: `read` ends on a character boundary.
  const { read } = encoder.encodeInto(result.content, new Uint8Array(room));
  return { ...result, content: `${result.content.slice(0, read)}${note}` };
}
