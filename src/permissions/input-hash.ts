import { createHash } from "node:crypto";
import { stringify } from "safe-stable-stringify";
import type { ToolCall } from "../core/values.js";

/**
 * Binds an approval to one run, one call id and this exact input: any change to the input
 * (or replaying the decision on another run or call) gives another hash.
 */
export function approvalHash(runId: string, call: ToolCall): string {
  return createHash("sha256")
    .update(`${runId}\u0000${call.id}\u0000${call.name}\u0000${stringify(call.input) ?? ""}`)
    .digest("hex");
}
