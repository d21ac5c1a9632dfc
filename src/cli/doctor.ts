import { diagnoseRedis, type RedisDoctorReport } from "../runtime/redis-doctor.js";

export interface DoctorOptions {
  redis: string;
  prefix?: string;
  json?: boolean;
  /** As the backend's option of the same name. @defaultValue 300000 */
  strandedAfterMs?: number;
  /** The store id recorded while the store was known good; another one is a problem. */
  expectStore?: string;
  /** Where the report goes. @defaultValue stdout */
  write?: (text: string) => void;
}

/** The code of a doctor that could not reach its Redis. */
export const UNREACHABLE = "redis_unreachable";

/** A Redis URL as it may be printed: its password, if any, replaced. */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === "") return url;
    parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(an unparsable URL)";
  }
}

/**
 * `harnessx doctor --redis URL`: checks a Redis for harnessx and prints a report (JSON with
 * `json`). Returns the exit code: 0 healthy, 1 when something needs fixing or Redis cannot be
 * reached.
 */
export async function runDoctor(options: DoctorOptions): Promise<number> {
  const write = options.write ?? ((text: string) => process.stdout.write(text));
  let report: RedisDoctorReport;
  try {
    report = await diagnoseRedis({
      redis: options.redis,
      ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
      ...(options.strandedAfterMs === undefined
        ? {}
        : { strandedAfterMs: options.strandedAfterMs }),
      ...(options.expectStore === undefined ? {} : { expectStore: options.expectStore }),
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const where = withoutPassword(options.redis);
    write(
      options.json === true
        ? `${JSON.stringify({ healthy: false, code: UNREACHABLE, problems: [`Cannot reach Redis at ${where}: ${reason}`] })}\n`
        : `harnessx doctor: cannot reach Redis at ${where} (${UNREACHABLE}): ${reason}\n`,
    );
    return 1;
  }
  write(options.json === true ? `${JSON.stringify(report, null, 2)}\n` : describe(report));
  return report.healthy ? 0 : 1;
}

function describe(report: RedisDoctorReport): string {
  const lines = [
    `Redis ${report.version ?? "(version unknown)"}, ${report.mode}; prefix "${report.prefix}"`,
    `  eviction policy: ${report.evictionPolicy.map((each) => each ?? "unknown").join(", ")}`,
    `  persistence: ${report.persistence
      .map((each) =>
        each === null ? "unknown" : `save '${each.save}', appendonly ${each.appendonly}`,
      )
      .join("; ")}`,
    `  store marker: ${report.storeId === null ? "missing" : `present (store id ${report.storeId})`}`,
    `  keys: ${
      Object.entries(report.keys)
        .map(([kind, count]) => `${kind} ${count}`)
        .join(", ") || "none"
    }`,
    `  stranded runs: ${report.strandedRuns.length === 0 ? "none" : report.strandedRuns.join(", ")}`,
    `  decided runs with no step: ${report.decidedRuns.length === 0 ? "none" : report.decidedRuns.join(", ")}`,
    ...Object.entries(report.queues).map(
      ([name, queue]) =>
        `  queue ${name}: ${queue.waiting} waiting${
          queue.oldestWaitingMs === null
            ? ""
            : `, oldest ${Math.round(queue.oldestWaitingMs / 1000)} s`
        }`,
    ),
    ...report.problems.map((problem) => `PROBLEM: ${problem}`),
    ...report.warnings.map((warning) => `warning: ${warning}`),
    report.healthy ? "healthy" : "needs fixing",
  ];
  return `${lines.join("\n")}\n`;
}
