import { createHash } from "../../core/node-crypto.js";
import { joinRecord } from "../../store/record/decode.js";
import type { RunRecord } from "../../store/schemas.js";
import type { RedisContext } from "./context.js";
import { storedSummary } from "./replies.js";

/**
 * Reads a run's record, hands it to `check` (which throws to refuse a decision), and returns
 * the stored document's fingerprint: a decision's script writes only while the record is still
 * the one checked. Without a check: "" (the script checks nothing).
 */
export async function checkedRecordFingerprint(
  { redis, keys }: RedisContext,
  runId: string,
  check: ((record: RunRecord | undefined) => void) | undefined,
): Promise<string> {
  if (check === undefined) return "";
  const [[document, summary], messages] = await Promise.all([
    redis.hmget(keys.run(runId), "record", "summary"),
    redis.lrange(keys.messages(runId), 0, -1),
  ]);
  check(
    document == null ? undefined : joinRecord(document, messages, storedSummary(runId, summary)),
  );
  return createHash("sha1")
    .update(document ?? "")
    .digest("hex");
}
