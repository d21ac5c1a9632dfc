import { describeIssues } from "../tools/validate.js";
import { BackendError, StoreVersionError } from "./errors.js";
import { RUN_RECORD_VERSION, RunRecord } from "./schemas.js";

/**
 * Earlier versions whose records have the current shape once loaded: 2 differs from 3 only in
 * how the Redis document leaves derivable parts out (see stored-record.ts), so a version-2
 * record or document is read as a version-3 one.
 */
const READ_AS_CURRENT: ReadonlySet<unknown> = new Set([2]);

/**
 * Reads a stored run record's JSON: a record of another `schemaVersion` is refused with
 * `StoreVersionError`, one that does not parse with `BackendError`; neither is ever misread.
 */
export function parseStoredRecord(json: string): RunRecord {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new BackendError("A stored run record is not valid JSON.", { cause: error });
  }
  return parseRecordValue(value);
}

/** `parseStoredRecord` for a record already parsed from JSON. */
export function parseRecordValue(value: unknown): RunRecord {
  const stored = typeof value === "object" && value !== null ? value : {};
  const version = "schemaVersion" in stored ? stored.schemaVersion : undefined;
  if (version !== RUN_RECORD_VERSION && !READ_AS_CURRENT.has(version)) {
    const runId = "runId" in stored && typeof stored.runId === "string" ? stored.runId : "?";
    throw new StoreVersionError(runId, version, RUN_RECORD_VERSION);
  }
  const parsed = RunRecord.safeParse(
    version === RUN_RECORD_VERSION ? value : { ...stored, schemaVersion: RUN_RECORD_VERSION },
  );
  if (!parsed.success) {
    throw new BackendError(
      `A stored run record does not parse: ${describeIssues(parsed.error.issues)}`,
    );
  }
  return parsed.data;
}
