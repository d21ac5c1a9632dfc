import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/index.js";
import {
  decodeCursor,
  encodeCursor,
  indexFor,
  indexName,
  newestFirst,
  pageOf,
  parseListOptions,
  runIndexes,
} from "../../../src/store/run-query.js";
import { RUN_RECORD_STATUSES } from "../../../src/store/schemas.js";
import type { RunSummary } from "../../../src/store/summary.js";
import { thrown } from "../../support/thrown.js";

const summary = (runId: string, createdAt: number): RunSummary => ({
  runId,
  agent: "support",
  sessionId: "s",
  status: "queued",
  phase: "compose",
  pending: [],
  iterations: 0,
  usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
  error: null,
  createdAt,
  updatedAt: createdAt,
});

describe("list queries", () => {
  it("round-trips a cursor and refuses anything else with ConfigError naming it", () => {
    const position = { createdAt: 1_764_748_800_123, runId: "run:é/1" };
    expect(decodeCursor(encodeCursor(position))).toEqual(position);
    for (const bad of ["", "%%%", "bm90IGpzb24", Buffer.from('[2,1,"a"]').toString("base64url")]) {
      const error = thrown(() => decodeCursor(bad));
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain("cursor");
    }
  });

  it("parses options with defaults and bounds", () => {
    expect(parseListOptions(undefined)).toEqual({ limit: 50 });
    expect(parseListOptions({ cursor: null, agent: undefined })).toEqual({ limit: 50 });
    expect(parseListOptions({ status: "failed", agent: "a", limit: 500 })).toEqual({
      status: "failed",
      agent: "a",
      limit: 500,
    });
    for (const bad of [{ limit: 501 }, { limit: 1.5 }, { agent: "" }, { sort: "asc" }]) {
      expect(thrown(() => parseListOptions(bad))).toBeInstanceOf(ConfigError);
    }
  });

  it("reads the narrowest indexes, filtering only a session's", () => {
    expect(indexFor({ limit: 1 })).toEqual({
      indexes: RUN_RECORD_STATUSES.map((status) => ({ kind: "status", status })),
      filter: {},
    });
    expect(indexFor({ limit: 1, agent: "a" })).toEqual({
      indexes: RUN_RECORD_STATUSES.map((status) => ({ kind: "agentStatus", agent: "a", status })),
      filter: {},
    });
    expect(indexFor({ limit: 1, status: "failed", agent: "a" })).toEqual({
      indexes: [{ kind: "agentStatus", agent: "a", status: "failed" }],
      filter: {},
    });
    expect(indexFor({ limit: 1, status: "failed", sessionId: "s" })).toEqual({
      indexes: [{ kind: "session", sessionId: "s" }],
      filter: { status: "failed" },
    });
    // Each run is in four indexes: its session's, its status's, its agent × status's, and the
    // run ids' (for a prefix search).
    expect(runIndexes(summary("r", 1)).map(indexName)).toEqual([
      "session:s",
      "status:queued",
      "agent-status:queued:support",
      "run-ids",
    ]);
    expect(indexName({ kind: "agentStatus", agent: "a:b", status: "queued" })).toBe(
      "agent-status:queued:a:b",
    );
  });

  it("orders newest first, then by run id bytewise as Redis does", () => {
    const ids = ["b", "a", "\u{1F600}", "\uFFFD", "ab"];
    const sorted = ids
      .map((runId) => ({ createdAt: 1, runId }))
      .sort(newestFirst)
      .map((each) => each.runId);
    // UTF-8 bytes: U+1F600 (F0 …) sorts above U+FFFD (EF …), unlike UTF-16 code units.
    expect(sorted).toEqual(["\u{1F600}", "\uFFFD", "b", "ab", "a"]);
    expect(newestFirst({ createdAt: 2, runId: "a" }, { createdAt: 1, runId: "z" })).toBeLessThan(0);
  });

  it("gives a next cursor only when there was more than a page", () => {
    const runs = [summary("c", 3), summary("b", 2), summary("a", 1)];
    expect(pageOf(runs, 3)).toEqual({ runs, nextCursor: null });
    const page = pageOf(runs, 2);
    expect(page.runs).toEqual(runs.slice(0, 2));
    expect(decodeCursor(page.nextCursor ?? "")).toEqual({ createdAt: 2, runId: "b" });
  });
});
