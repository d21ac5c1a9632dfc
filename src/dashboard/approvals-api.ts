import type { Request, RequestHandler, Response } from "express";
import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.js";
import type { AgentRuntime } from "../runtime/agent-runtime.js";
import { MAX_LIST_LIMIT } from "../store/run-query.js";
import { redactToolInputs } from "../tools/secret-inputs.js";
import type { Caller } from "./auth.js";
import { answerFor } from "./http-errors.js";
import { express, type Router } from "./load-express.js";
import { parseOrRefuse } from "./parse-request.js";
import { requireMayDecide } from "./scoped-decisions.js";

const ApprovalsQuery = lazySchema(() =>
  z.strictObject({
    limit: z.coerce.number().int().min(1).max(MAX_LIST_LIMIT).optional(),
    cursor: z.string().min(1).max(2000).optional(),
    agent: z.string().min(1).max(200).optional(),
    tool: z.string().min(1).max(200).optional(),
  }),
);

/** Items one bulk decision may hold. */
export const MAX_BULK_ITEMS = 100;

const BulkDecisionBody = lazySchema(() =>
  z.strictObject({
    items: z
      .array(
        z.strictObject({
          runId: z.string().min(1).max(500),
          toolCallId: z.string().min(1).max(500),
        }),
      )
      .min(1)
      .max(MAX_BULK_ITEMS),
    decision: z.enum(["allow", "deny"]),
    reason: z.string().max(2000).optional(),
  }),
);

/** One waiting call in the approvals inbox. */
export interface InboxEntry {
  runId: string;
  agent: string;
  toolCallId: string;
  name: string;
  input: Record<string, unknown>;
  reason: string;
  /** When the run parked (ms since the epoch): how long the call has waited. */
  since: number;
  /** The run at the root of the run's tree (§14); the run's own id when it has no parent. */
  rootRunId: string;
}

/** How one item of a bulk decision went. */
export interface BulkDecisionResult {
  runId: string;
  toolCallId: string;
  ok: boolean;
  error?: { code: string; message: string };
}

/**
 * `GET /approvals` (the inbox, by agent and tool when asked) and `POST /approvals/decide` (one
 * decision on many calls, each item decided on its own through the runtime: one that fails
 * leaves the others decided).
 */
export function approvalRoutes(
  router: Router,
  options: {
    runtime: AgentRuntime;
    read: RequestHandler;
    write: RequestHandler;
  },
): void {
  const { runtime } = options;
  const json = express.json({ limit: "64kb" });

  router.get("/approvals", options.read, async (request, response) => {
    const query = parseOrRefuse(ApprovalsQuery, request.query, "query");
    const limit = query.limit ?? 50;
    // A scoped token's inbox holds only the calls it may decide.
    const scope = (response.locals.caller as Caller | undefined)?.scope;
    const approvals: InboxEntry[] = [];
    let cursor: string | null = query.cursor ?? null;
    // Runs are paged; a run's waiting calls are never split across pages.
    do {
      const page = await runtime.list({
        status: "awaiting_approval",
        agent: query.agent,
        limit,
        cursor,
      });
      for (const run of page.runs) {
        for (const call of run.pending) {
          if (query.tool !== undefined && call.name !== query.tool) continue;
          if (scope !== undefined && !scope.allows(run.agent, call.name)) continue;
          approvals.push({
            runId: run.runId,
            agent: run.agent,
            ...call,
            toolCallId: call.toolCallId,
            since: run.updatedAt,
            rootRunId: run.rootRunId ?? run.runId,
          });
        }
      }
      cursor = page.nextCursor;
    } while (cursor !== null && approvals.length < limit);
    response.json(redactToolInputs({ approvals, nextCursor: cursor }));
  });

  router.post(
    "/approvals/decide",
    options.write,
    json,
    async (request: Request, response: Response) => {
      const body = parseOrRefuse(BulkDecisionBody, request.body, "body");
      const caller = response.locals.caller as Caller;
      const by = {
        by: caller.name,
        ...(body.reason === undefined ? {} : { reason: body.reason }),
      };
      const results = await Promise.all(
        body.items.map(async ({ runId, toolCallId }): Promise<BulkDecisionResult> => {
          try {
            await requireMayDecide(runtime, caller, runId, toolCallId);
            if (body.decision === "allow") await runtime.approve(runId, toolCallId, by);
            else await runtime.deny(runId, toolCallId, by);
            return { runId, toolCallId, ok: true };
          } catch (error) {
            const { code, message } = answerFor(error, runtime.logger);
            return { runId, toolCallId, ok: false, error: { code, message } };
          }
        }),
      );
      response.json({ results });
    },
  );
}
