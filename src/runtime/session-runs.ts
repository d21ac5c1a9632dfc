import type { RunBackend } from "../store/backend.js";
import type { RunQuery } from "../store/run-query.js";

/** The ids of every stored run of a session, page by page. */
export async function sessionRunIds(backend: RunBackend, sessionId: string): Promise<string[]> {
  let cursor: RunQuery["after"];
  const ids: string[] = [];
  for (;;) {
    const page = await backend.listRuns({
      sessionId,
      limit: 200,
      ...(cursor === undefined ? {} : { after: cursor }),
    });
    ids.push(...page.runs.map((run) => run.runId));
    const last = page.runs.at(-1);
    if (page.nextCursor === null || last === undefined) break;
    cursor = { createdAt: last.createdAt, runId: last.runId };
  }
  return ids;
}
