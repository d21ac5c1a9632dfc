import type { AddressInfo, Socket } from "node:net";
import { fileURLToPath } from "node:url";
import type { NextFunction, Request, Response } from "express";
import { z } from "zod";
import { ConfigError } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import { AgentRuntime } from "../runtime/agent-runtime.js";
import { describeIssues } from "../tools/validate.js";
import { apiRouter } from "./api.js";
import { DashboardAuth, requireReader, requireSameOriginSession } from "./auth.js";
import { requireKnownHost } from "./host-check.js";
import { errorResponder } from "./http-errors.js";
import { express } from "./load-express.js";
import { queuesRouter } from "./queues.js";
import type { EventStream } from "./sse.js";
import { type GuessLimit, TokenGuesses } from "./token-guesses.js";
import type { TokenScope } from "./token-scopes.js";

export interface DashboardOptions {
  /** A started runtime: the dashboard reads and decides runs through it alone. */
  runtime: AgentRuntime;
  /**
   * Bearer tokens by name. Every write needs one, and a decision's `by` is its name. A token
   * given as `{ token, tools?, agents? }` (globs) decides only calls of those tools in runs of
   * those agents (403 `forbidden` otherwise), and its inbox lists only those.
   * @example { "ops-lead": process.env.OPS_TOKEN, support: { token: process.env.SUPPORT_TOKEN, tools: ["refund_*"] } }
   */
  tokens: Record<string, string | undefined | ({ token: string | undefined } & TokenScope)>;
  /**
   * Reads (runs, timelines, the inbox, streams, queues) without a token.
   * @defaultValue false
   */
  readOpen?: boolean;
  /**
   * The path the dashboard is mounted under (`app.use("/harnessx", dashboard.handler)`), for the
   * queue view's links and the session cookie; none when it is served at the root.
   * @defaultValue ""
   */
  basePath?: string;
  /** The bull-board queue view (Redis backend). */
  queues?: {
    /** @defaultValue true */
    readOnly?: boolean;
  };
  /**
   * Signs session cookies; give dashboards behind one load balancer the same one.
   * @defaultValue 32 random bytes per dashboard
   */
  sessionSecret?: string;
  /** How long a session cookie (made by `POST /api/session`) lasts. @defaultValue 43200000 (12 h) */
  sessionTtlMs?: number;
  /**
   * Wrong bearer tokens allowed per client address (`request.ip`: behind a proxy, set express's
   * `trust proxy` on the app you mount the handler in) before it is answered 429 with
   * `Retry-After`. @defaultValue { failures: 5, windowMs: 60000 }
   */
  guessLimit?: GuessLimit | undefined;
  /**
   * Host names (or `name:port`) the dashboard answers for besides the address it listens on and
   * `localhost`: the names a proxy or browser uses to reach it. Any other `Host` is refused
   * (421), so a page on another site cannot read runs through DNS rebinding.
   * @defaultValue []
   * @example ["dash.example.com"]
   */
  allowedHosts?: readonly string[] | undefined;
}

export interface DashboardServer {
  /** Where the page is, such as `http://127.0.0.1:4400/`. */
  url: string;
  /** Ends open streams and stops listening. */
  close(): Promise<void>;
}

export interface Dashboard {
  /** A Node request listener (an express app): mount it anywhere. */
  handler: (
    request: import("node:http").IncomingMessage,
    response: import("node:http").ServerResponse,
  ) => void;
  listen(options?: { port?: number; host?: string }): Promise<DashboardServer>;
  /** Ends the streams open on `handler` (a server made by `listen` does it on close). */
  closeStreams(): void;
}

const BearerToken = lazySchema(() =>
  z
    .string({ error: "is not set (an environment variable left empty?)" })
    .min(16, "must be at least 16 characters"),
);
const ScopeGlobs = lazySchema(() => z.array(z.string().min(1).max(200)).max(100));

const Options = lazySchema(() =>
  z.strictObject({
    runtime: z.instanceof(AgentRuntime),
    tokens: z.record(
      z.string().regex(/^[\w.@-]{1,64}$/, "token names are 1-64 letters, digits, . _ @ or -"),
      z.union([
        BearerToken,
        z.strictObject({
          token: BearerToken,
          tools: ScopeGlobs.optional(),
          agents: ScopeGlobs.optional(),
        }),
      ]),
    ),
    readOpen: z.boolean().optional(),
    basePath: z
      .string()
      .regex(/^(\/[\w.~-]+)*$/, 'must be "" or like "/harnessx"')
      .optional(),
    queues: z.strictObject({ readOnly: z.boolean().optional() }).optional(),
    sessionSecret: z.string().min(32).optional(),
    sessionTtlMs: z.number().int().positive().optional(),
    guessLimit: z
      .strictObject({
        failures: z.number().int().positive().optional(),
        windowMs: z.number().int().positive().optional(),
      })
      .optional(),
    allowedHosts: z
      .array(
        z
          .string()
          .regex(
            /^(\[[\da-fA-F:.]+\]|[\w.-]+)(:\d{1,5})?$/,
            'must be a host name or address, optionally with ":port"',
          ),
      )
      .optional(),
  }),
);

/**
 * The page's files: next to this module in src and in dist (the build copies them). Named from
 * the parent folder, so that the bundle in dist/lib/ (a sibling of dist/dashboard/) finds them too.
 */
const PAGE_DIR = fileURLToPath(new URL("../dashboard/page/", import.meta.url));

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * bull-board's page: inline scripts and its own `<base href>` (its scripts load relative to it,
 * so every queue URL, with or without a trailing slash, and a reload, finds them); the rest of
 * the policy stays.
 */
const QUEUES_CSP = "frame-ancestors 'none'; base-uri 'self'; form-action 'none'";

const isQueuesPath = (path: string): boolean =>
  path === "/admin/queues" || path.startsWith("/admin/queues/");

/** Security headers on every answer; bull-board's own page gets `QUEUES_CSP`, the rest `CSP`. */
function securityHeaders(request: Request, response: Response, next: NextFunction): void {
  response.set({
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Content-Security-Policy": isQueuesPath(request.path) ? QUEUES_CSP : CSP,
  });
  next();
}

/**
 * The dashboard of SPEC §12: a JSON API over an `AgentRuntime` (runs, timelines, the approvals
 * inbox, decisions, live streams), the page, and the BullMQ queues (bull-board) of a Redis
 * backend.
 * @example
 * const dashboard = createDashboard({ runtime, tokens: { "ops-lead": process.env.OPS_TOKEN } });
 * const server = await dashboard.listen({ port: 4400, host: "127.0.0.1" });
 */
export function createDashboard(options: DashboardOptions): Dashboard {
  const parsed = Options.safeParse(options);
  if (!parsed.success) {
    throw new ConfigError(`Invalid dashboard options: ${describeIssues(parsed.error.issues)}`);
  }
  const { runtime } = options;
  const tokens = parsed.data.tokens;
  const basePath = parsed.data.basePath ?? "";
  const auth = new DashboardAuth(
    tokens,
    parsed.data.sessionSecret,
    parsed.data.sessionTtlMs ?? 43_200_000,
  );
  const guard = {
    auth,
    readOpen: parsed.data.readOpen ?? false,
    now: () => Date.now(),
    guesses: new TokenGuesses(parsed.data.guessLimit),
  };
  const streams = new Set<EventStream>();
  const track = (stream: EventStream) => {
    streams.add(stream);
    return () => streams.delete(stream);
  };

  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use(securityHeaders);
  app.use(requireKnownHost(parsed.data.allowedHosts ?? []));
  app.use("/api", apiRouter({ ...guard, runtime, auth, heartbeatMs: 15_000, track }));

  const backendQueues = runtime.queues();
  if (backendQueues.length === 0) {
    app.get("/admin/queues", requireReader(guard), (_request, response) => {
      response.status(404).json({
        error: {
          code: "no_queues",
          message:
            "This runtime's backend has no BullMQ queues (the memory backend runs jobs in-process).",
        },
      });
    });
  } else {
    const board = queuesRouter({
      queues: backendQueues,
      basePath,
      readOnly: parsed.data.queues?.readOnly ?? true,
    });
    app.use(
      "/admin/queues",
      requireReader(guard),
      requireSameOriginSession(guard),
      (request, response, next) => {
        board.then((router) => router(request, response, next), next);
      },
    );
  }

  app.get("/config.json", (_request, response) => {
    response.set("Cache-Control", "no-store").json({
      queues: backendQueues.length > 0,
      readOpen: guard.readOpen,
    });
  });
  app.use(
    express.static(PAGE_DIR, {
      index: "index.html",
      fallthrough: true,
      redirect: false,
      maxAge: 0,
    }),
  );
  app.use((_request, response) => {
    response.status(404).json({ error: { code: "not_found", message: "Nothing here." } });
  });
  app.use(errorResponder(runtime.logger));

  const closeStreams = (): void => {
    for (const stream of streams) stream.end();
    streams.clear();
  };

  return {
    handler: app,
    closeStreams,
    async listen({ port = 4400, host = "127.0.0.1" } = {}) {
      // node:http loads when a dashboard first listens, not at import (SPEC §15).
      const server = process.getBuiltinModule("node:http").createServer(app);
      const sockets = new Set<Socket>();
      server.on("connection", (socket) => {
        sockets.add(socket);
        socket.once("close", () => sockets.delete(socket));
      });
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => resolve());
      });
      const address = server.address() as AddressInfo;
      const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
      return {
        url: `http://${shownHost}:${address.port}${basePath}/`,
        async close() {
          closeStreams();
          const closed = new Promise<void>((resolve) => server.close(() => resolve()));
          server.closeIdleConnections();
          for (const socket of sockets) socket.destroy();
          await closed;
        },
      };
    },
  };
}
