import { z } from "zod";
import { InputTooLargeError } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import type { Message } from "../core/values.js";
import { DEFAULT_MAX_BYTES } from "../tools/result-limit.js";

/** Size limits of a durable runtime (SPEC §8). */
export interface RuntimeLimits {
  /**
   * The largest run input `submit` stores, in UTF-8 bytes (a string as is, messages as JSON);
   * a bigger one is refused with `InputTooLargeError`.
   * @defaultValue 1048576 (1 MB)
   */
  maxInputBytes?: number;
  /**
   * The largest tool call input taken from the model, in UTF-8 bytes of its JSON; a call with a
   * bigger one gets an error result (its handler does not run) and its input is stored nowhere,
   * only its size.
   * @defaultValue 1048576 (1 MB)
   */
  maxToolInputBytes?: number;
  /**
   * The largest raw tool result committed, in UTF-8 bytes of its content; a bigger one is cut
   * to fit, with a note saying so to the model, before it is committed.
   * @defaultValue 1048576 (1 MB)
   */
  maxToolResultBytes?: number;
}

/** Room for the note a cut result ends with. */
const MIN_TOOL_RESULT_BYTES = 256;

export const RuntimeLimitsSchema = lazySchema(() =>
  z.strictObject({
    maxInputBytes: z.number().int().positive().optional(),
    maxToolInputBytes: z.number().int().positive().optional(),
    maxToolResultBytes: z.number().int().min(MIN_TOOL_RESULT_BYTES).optional(),
  }),
);

export function resolveLimits(limits: RuntimeLimits = {}): Required<RuntimeLimits> {
  return {
    maxInputBytes: limits.maxInputBytes ?? DEFAULT_MAX_BYTES,
    maxToolInputBytes: limits.maxToolInputBytes ?? DEFAULT_MAX_BYTES,
    maxToolResultBytes: limits.maxToolResultBytes ?? DEFAULT_MAX_BYTES,
  };
}

/**
 * Refuses an input bigger than `maxBytes` with `InputTooLargeError`. `input` is what was
 * submitted, `messages` the same input already checked as plain JSON data.
 */
export function checkInputSize(
  input: string | readonly Message[],
  messages: readonly Message[],
  maxBytes: number,
): void {
  const bytes = Buffer.byteLength(typeof input === "string" ? input : JSON.stringify(messages));
  if (bytes > maxBytes) throw new InputTooLargeError(bytes, maxBytes);
}
