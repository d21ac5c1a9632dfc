import { createHash } from "../core/node-crypto.js";
import type { ToolSchema } from "../core/values.js";

interface CacheEntry {
  digest: string;
  system?: string;
  key?: string;
}

// Per tool-list array: its digest, and the last key made with it (most iterations repeat it).
const cache = new WeakMap<readonly ToolSchema[], CacheEntry>();

/**
 * The prompt-cache key of a request: a hash of the rendered system prompt and the tool schemas.
 * Requests share it exactly when both are unchanged.
 */
export function prefixKey(system: string, tools: readonly ToolSchema[]): string {
  let entry = cache.get(tools);
  if (entry === undefined) {
    entry = { digest: createHash("sha256").update(JSON.stringify(tools)).digest("hex") };
    cache.set(tools, entry);
  }
  if (entry.key === undefined || entry.system !== system) {
    entry.system = system;
    entry.key = createHash("sha256")
      .update(system)
      .update("\u0000")
      .update(entry.digest)
      .digest("hex")
      .slice(0, 32);
  }
  return entry.key;
}
