import { createHash } from "node:crypto";
import type { ToolSchema } from "../core/values.js";

const toolsDigest = new WeakMap<readonly ToolSchema[], string>();

/**
 * The prompt-cache key of a request: a hash of the rendered system prompt and the tool schemas.
 * Requests share it exactly when both are unchanged.
 */
export function prefixKey(system: string, tools: readonly ToolSchema[]): string {
  let digest = toolsDigest.get(tools);
  if (digest === undefined) {
    digest = createHash("sha256").update(JSON.stringify(tools)).digest("hex");
    toolsDigest.set(tools, digest);
  }
  return createHash("sha256")
    .update(system)
    .update("\u0000")
    .update(digest)
    .digest("hex")
    .slice(0, 32);
}
