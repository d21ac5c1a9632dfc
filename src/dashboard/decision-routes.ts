import type { Request, RequestHandler, Response } from "express";
import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.js";
import type { AgentRuntime } from "../runtime/agent-runtime.js";
import { redactToolInputs } from "../tools/secret-inputs.js";
import type { Caller } from "./auth.js";
import { express, type Router } from "./load-express.js";
import { parseOrRefuse } from "./parse-request.js";
import { requireMayDecide } from "./scoped-decisions.js";

/** The largest edited input a decision body may carry. */
const DECISION_BODY_LIMIT = "256kb";
/**
 * A respond body: above the runtime's default `maxToolResultBytes` (1 MB), so that a bigger
 * answer gets the runtime's own `input_too_large` naming the limit, not a bare 413.
 */
const RESPOND_BODY_LIMIT = "4mb";

const ApproveBody = lazySchema(() =>
  z.strictObject({
    reason: z.string().max(2000).optional(),
    /** The person's edit of the call's input. */
    input: z.record(z.string(), z.unknown()).optional(),
  }),
);
const DenyBody = lazySchema(() => z.strictObject({ reason: z.string().max(2000).optional() }));
const RespondBody = lazySchema(() =>
  z.strictObject({
    content: z.string(),
    isError: z.boolean().optional(),
    reason: z.string().max(2000).optional(),
  }),
);

/**
 * `POST /runs/:runId/calls/:toolCallId/approve` (`{ reason?, input? }`), `…/deny`
 * (`{ reason? }`) and `…/respond` (`{ content, isError?, reason? }`): one decision on one call,
 * by the caller's token name (never the body's). Errors leave through the API's error handler:
 * 400 `input_invalid` / `approval_refused` / a bad body, 409 `already_decided` /
 * `approver_repeated`, 404 for an unknown run or call.
 */
export function decisionRoutes(
  router: Router,
  options: { runtime: AgentRuntime; write: RequestHandler },
): void {
  const { runtime, write } = options;
  // A scoped token may decide only its tools' and agents' calls (403 forbidden otherwise).
  const decider = async (request: Request, response: Response, reason: string | undefined) => {
    const caller = response.locals.caller as Caller;
    const runId = String(request.params.runId);
    const toolCallId = String(request.params.toolCallId);
    await requireMayDecide(runtime, caller, runId, toolCallId);
    return {
      runId,
      toolCallId,
      by: { by: caller.name, ...(reason === undefined ? {} : { reason }) },
    };
  };
  router.post(
    "/runs/:runId/calls/:toolCallId/approve",
    write,
    express.json({ limit: DECISION_BODY_LIMIT }),
    async (request: Request, response: Response) => {
      const body = parseOrRefuse(ApproveBody, request.body, "body");
      const { runId, toolCallId, by } = await decider(request, response, body.reason);
      await runtime.approve(runId, toolCallId, {
        ...by,
        ...(body.input === undefined ? {} : { input: body.input }),
      });
      response.json(redactToolInputs({ decided: "allow" }));
    },
  );
  router.post(
    "/runs/:runId/calls/:toolCallId/deny",
    write,
    express.json({ limit: DECISION_BODY_LIMIT }),
    async (request: Request, response: Response) => {
      const body = parseOrRefuse(DenyBody, request.body, "body");
      const { runId, toolCallId, by } = await decider(request, response, body.reason);
      await runtime.deny(runId, toolCallId, by);
      response.json({ decided: "deny" });
    },
  );
  router.post(
    "/runs/:runId/calls/:toolCallId/respond",
    write,
    express.json({ limit: RESPOND_BODY_LIMIT }),
    async (request: Request, response: Response) => {
      const body = parseOrRefuse(RespondBody, request.body, "body");
      const { runId, toolCallId, by } = await decider(request, response, body.reason);
      await runtime.respond(runId, toolCallId, {
        ...by,
        content: body.content,
        ...(body.isError === undefined ? {} : { isError: body.isError }),
      });
      response.json({ decided: "respond" });
    },
  );
}
