import { createRequire } from "../core/node-builtins.js";
import { createHash, createHmac } from "../core/node-crypto.js";
import type { ToolCall } from "../core/values.js";

// safe-stable-stringify loads with the first approval, not at import (SPEC §15).
let stableStringify: typeof import("safe-stable-stringify").stringify | undefined;
const stringify = (value: unknown): string | undefined => {
  stableStringify ??= (
    createRequire(import.meta.url)(
      "safe-stable-stringify",
    ) as typeof import("safe-stable-stringify")
  ).stringify;
  return stableStringify(value);
};

/**
 * Binds an approval to one run, one call id and this exact input: any change to the input
 * (or replaying the decision on another run or call) gives another hash. With a `key` it is an
 * HMAC, so whoever edits parked data without the key cannot forge a matching hash.
 */
export function approvalHash(runId: string, call: ToolCall, key?: string): string {
  const hash = key === undefined ? createHash("sha256") : createHmac("sha256", key);
  return hash
    .update(`${runId}\u0000${call.id}\u0000${call.name}\u0000${stringify(call.input) ?? ""}`)
    .digest("hex");
}
