import type { Request, Response } from "express";
import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.js";
import type { AgentRuntime } from "../runtime/agent-runtime.js";
import { OVERVIEW_WINDOWS } from "../store/overview.js";
import { MAX_EVENT_PAGE } from "../store/run-feeds.js";
import { MAX_LIST_LIMIT } from "../store/run-query.js";
import { isTerminal, RunRecordStatus } from "../store/schemas.js";
import { redactToolInputs, type SecretInputs } from "../tools/secret-inputs.js";
import { approvalRoutes } from "./approvals-api.js";
import {
  type Caller,
  type DashboardAuth,
  type GuardOptions,
  requireReader,
  requireWriter,
  SESSION_COOKIE,
} from "./auth.js";
import { decisionRoutes } from "./decision-routes.js";
import { HttpError } from "./http-errors.js";
import { express, Router } from "./load-express.js";
import { parseOrRefuse } from "./parse-request.js";
import { type EventStream, openEventStream, wantsEventStream } from "./sse.js";

const RunsQuery = lazySchema(() =>
  z.strictObject({
    status: RunRecordStatus.optional(),
    agent: z.string().min(1).max(200).optional(),
    sessionId: z.string().min(1).max(500).optional(),
    since: z.coerce.number().int().nonnegative().optional(),
    until: z.coerce.number().int().nonnegative().optional(),
    q: z.string().min(1).max(500).optional(),
    limit: z.coerce.number().int().min(1).max(MAX_LIST_LIMIT).optional(),
    cursor: z.string().min(1).max(2000).optional(),
    parentRunId: z.string().min(1).max(500).optional(),
    rootRunId: z.string().min(1).max(500).optional(),
  }),
);

const OverviewQuery = lazySchema(() =>
  z.strictObject({ window: z.enum(OVERVIEW_WINDOWS).optional() }),
);

const EventsQuery = lazySchema(() =>
  z.strictObject({
    after: z.coerce.number().int().nonnegative().optional(),
    limit: z.coerce.number().int().min(1).max(MAX_EVENT_PAGE).optional(),
  }),
);

const EmptyBody = lazySchema(() => z.strictObject({}));

export interface ApiOptions extends GuardOptions {
  runtime: AgentRuntime;
  auth: DashboardAuth;
  heartbeatMs: number;
  /** Remembers open streams so that closing the dashboard ends them. */
  track: (stream: EventStream) => () => void;
}

/** Sends a body with every secret input in it redacted (`redactToolInputs`). */
const send = (response: Response, body: unknown, secrets?: SecretInputs): void => {
  response.json(redactToolInputs(body, secrets));
};

/**
 * The JSON API of SPEC §12. Every body leaves through `redactToolInputs`: fields named like a
 * secret, and the fields the run's tools mark secret (summaries hold none already).
 */
export function apiRouter(options: ApiOptions): Router {
  const { runtime } = options;
  const router = Router();
  const read = requireReader(options);
  const write = requireWriter(options);
  const json = express.json({ limit: "16kb" });
  router.use((_request, response, next) => {
    response.set("Cache-Control", "no-store");
    next();
  });

  router.post("/session", write, (request: Request, response: Response) => {
    const caller = response.locals.caller as Caller;
    response.cookie(SESSION_COOKIE, options.auth.session(caller, options.now()), {
      httpOnly: true,
      sameSite: "strict",
      secure: request.secure,
      path: request.baseUrl.replace(/\/api$/, "") || "/",
      maxAge: options.auth.sessionTtlMs,
    });
    send(response, { name: caller.name, expiresAt: options.now() + options.auth.sessionTtlMs });
  });

  router.delete("/session", (request: Request, response: Response) => {
    response.clearCookie(SESSION_COOKIE, { path: request.baseUrl.replace(/\/api$/, "") || "/" });
    response.status(204).end();
  });

  router.get("/whoami", read, (_request, response) => {
    const scope = response.locals.caller?.scope;
    send(response, {
      name: response.locals.caller?.name ?? null,
      readOpen: options.readOpen,
      // Only a scoped token says what it may decide (the page's inbox lists only that).
      ...(scope === undefined ? {} : { scope: scope.globs }),
    });
  });

  router.get("/runs", read, async (request, response) => {
    const query = parseOrRefuse(RunsQuery, request.query, "query");
    send(response, await runtime.list(query));
  });

  router.get("/overview", read, async (request, response) => {
    const query = parseOrRefuse(OverviewQuery, request.query, "query");
    send(response, await runtime.overview(query));
  });

  router.get("/runs/:runId", read, async (request, response) => {
    const detail = await runtime.get(String(request.params.runId));
    send(response, detail, detail.secretInputs);
  });

  router.get("/runs/:runId/events", read, async (request, response) => {
    const runId = String(request.params.runId);
    const query = parseOrRefuse(EventsQuery, request.query, "query");
    // Tool calls in events carry their inputs: redacted by the run's secret fields.
    const { secretInputs } = await runtime.get(runId);
    if (!wantsEventStream(request)) {
      send(response, await runtime.events(runId, query), secretInputs);
      return;
    }
    const lastId = Number(request.get("last-event-id"));
    const after = Number.isInteger(lastId) && lastId >= 0 ? lastId + 1 : (query.after ?? 0);
    const events = await runtime.followEvents(runId, { after });
    const stream = openEventStream(request, response, options.heartbeatMs, options.track);
    const iterator = events[Symbol.asyncIterator]();
    stream.closed.addEventListener("abort", () => void iterator.return?.(), { once: true });
    for (;;) {
      const next = await iterator.next();
      if (next.done || stream.closed.aborted) break;
      stream.send(
        "run_event",
        redactToolInputs(next.value.event, secretInputs),
        next.value.position,
      );
    }
    stream.send("end", {});
    stream.end();
  });

  approvalRoutes(router, { runtime, read, write });

  decisionRoutes(router, { runtime, write });

  router.post("/runs/:runId/cancel", write, json, async (request, response) => {
    parseOrRefuse(EmptyBody, request.body, "body");
    const runId = String(request.params.runId);
    const run = await runtime.get(runId);
    if (isTerminal(run.status)) {
      throw new HttpError(409, "run_finished", `Run "${runId}" has finished (${run.status}).`);
    }
    // Who cancels is the token's name, never taken from the body (as for decisions).
    await runtime.cancel(runId, { by: (response.locals.caller as Caller).name });
    send(response, { cancelled: true });
  });

  router.get("/stream", read, async (request, response) => {
    const stop = new AbortController();
    const changes = await runtime.watch({ signal: stop.signal });
    const stream = openEventStream(request, response, options.heartbeatMs, options.track);
    stream.closed.addEventListener("abort", () => stop.abort(), { once: true });
    stream.send("ready", {});
    for await (const summary of changes) stream.send("run", redactToolInputs(summary));
  });

  router.use((_request, _response, next) => {
    next(new HttpError(404, "not_found", "No such API endpoint."));
  });
  return router;
}
