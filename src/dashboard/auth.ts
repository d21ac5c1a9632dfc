import type { NextFunction, Request, Response } from "express";
import { createHmac, randomBytes, timingSafeEqual } from "../core/node-crypto.js";
import type { TokenGuesses } from "./token-guesses.js";
import { type DecisionScope, splitEntry, type TokenEntry } from "./token-scopes.js";

/** The cookie that lets the page's EventSource streams and the queue view read (GET only). */
export const SESSION_COOKIE = "hx_session";

/** Who a request comes from: the name of the token it showed. */
export interface Caller {
  name: string;
  /** What the token may decide; none: anything. */
  scope?: DecisionScope;
}

declare module "express-serve-static-core" {
  interface Locals {
    caller?: Caller;
  }
}

/**
 * Bearer tokens by name, compared in constant time, and signed session cookies: a cookie says
 * a token's name and when it expires, under an HMAC only this dashboard (or one given the same
 * secret) can make.
 */
export class DashboardAuth {
  readonly #tokens: ReadonlyArray<{ name: string; digest: Buffer; scope?: DecisionScope }>;
  readonly #secret: Buffer;
  readonly sessionTtlMs: number;

  constructor(
    tokens: Record<string, TokenEntry>,
    secret: string | undefined,
    sessionTtlMs: number,
  ) {
    this.#secret = secret === undefined ? randomBytes(32) : Buffer.from(secret);
    // Digests have one length, so comparing them leaks nothing about a token's length.
    this.#tokens = Object.entries(tokens).map(([name, entry]) => {
      const { token, scope } = splitEntry(entry);
      return { name, digest: this.#digest(token), ...(scope === undefined ? {} : { scope }) };
    });
    this.sessionTtlMs = sessionTtlMs;
  }

  /** The name of the token in `Authorization: Bearer <token>`, if it is one of ours. */
  bearer(header: string | undefined): Caller | undefined {
    const match = /^Bearer (\S+)$/i.exec(header ?? "");
    if (match?.[1] === undefined) return undefined;
    const digest = this.#digest(match[1]);
    let found: Caller | undefined;
    // Every token is compared, so the time taken does not say which one matched.
    for (const token of this.#tokens) {
      if (timingSafeEqual(token.digest, digest) && found === undefined) found = callerOf(token);
    }
    return found;
  }

  /** A signed session value for `caller`, valid for `sessionTtlMs`. */
  session(caller: Caller, now: number): string {
    const body = Buffer.from(JSON.stringify({ n: caller.name, e: now + this.sessionTtlMs }));
    return `${body.toString("base64url")}.${this.#sign(body).toString("base64url")}`;
  }

  /** The caller a session cookie names, when its signature holds and it has not expired. */
  fromSession(cookieHeader: string | undefined, now: number): Caller | undefined {
    const value = readCookie(cookieHeader, SESSION_COOKIE);
    const [body, signature] = value?.split(".") ?? [];
    if (body === undefined || signature === undefined) return undefined;
    const bytes = Buffer.from(body, "base64url");
    const given = Buffer.from(signature, "base64url");
    const expected = this.#sign(bytes);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const parsed = JSON.parse(bytes.toString()) as { n?: unknown; e?: unknown };
      if (typeof parsed.n !== "string" || typeof parsed.e !== "number" || parsed.e < now) {
        return undefined;
      }
      // A session outlives no token: the name must still have one (and takes its scope).
      const token = this.#tokens.find((each) => each.name === parsed.n);
      return token === undefined ? undefined : callerOf(token);
    } catch {
      return undefined;
    }
  }

  #digest(token: string): Buffer {
    return createHmac("sha256", this.#secret).update(`token:${token}`).digest();
  }

  #sign(body: Buffer): Buffer {
    return createHmac("sha256", this.#secret).update("session:").update(body).digest();
  }
}

const callerOf = (token: { name: string; scope?: DecisionScope }): Caller =>
  token.scope === undefined ? { name: token.name } : { name: token.name, scope: token.scope };

/** One cookie's value from a `Cookie` header (express parses no cookies without a plugin). */
function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

export interface GuardOptions {
  auth: DashboardAuth;
  readOpen: boolean;
  now: () => number;
  /** Wrong bearer tokens by client address: too many and the address is refused for a while. */
  guesses: TokenGuesses;
}

const unauthorized = (response: Response, message: string): void => {
  response
    .status(401)
    .set("WWW-Authenticate", 'Bearer realm="harnessx"')
    .json({ error: { code: "unauthorized", message } });
};

const tooManyGuesses = (response: Response, seconds: number): void => {
  response
    .status(429)
    .set("Retry-After", String(seconds))
    .json({
      error: {
        code: "too_many_attempts",
        message: `Too many wrong tokens from this address: try again in ${seconds} s.`,
      },
    });
};

/**
 * The caller the request's bearer token names (undefined without one, or with a wrong one),
 * or null when the request was answered 429: its address showed too many wrong tokens. Only
 * requests that show a token count; a right one costs one lookup.
 */
async function bearerCaller(
  { auth, guesses }: GuardOptions,
  request: Request,
  response: Response,
): Promise<Caller | undefined | null> {
  const header = request.get("authorization");
  if (header === undefined) return undefined;
  const address = request.ip ?? request.socket.remoteAddress ?? "unknown";
  const refused = await guesses.refusedFor(address);
  if (refused > 0) {
    tooManyGuesses(response, refused);
    return null;
  }
  const caller = auth.bearer(header);
  if (caller !== undefined) return caller;
  const wait = await guesses.failed(address);
  if (wait === 0) return undefined;
  tooManyGuesses(response, wait);
  return null;
}

/** Writes: a bearer token only (no cookie, so no cross-site request can write). */
export function requireWriter(options: GuardOptions) {
  return async (request: Request, response: Response, next: NextFunction): Promise<void> => {
    const caller = await bearerCaller(options, request, response);
    if (caller === null) return;
    if (caller === undefined) {
      unauthorized(response, "Writes need Authorization: Bearer <token> with a known token.");
      return;
    }
    response.locals.caller = caller;
    next();
  };
}

/** Reads: open with `readOpen`, else a bearer token or a session cookie. */
export function requireReader(options: GuardOptions) {
  const { auth, readOpen, now } = options;
  return async (request: Request, response: Response, next: NextFunction): Promise<void> => {
    const bearer = await bearerCaller(options, request, response);
    if (bearer === null) return;
    const caller = bearer ?? auth.fromSession(request.get("cookie"), now());
    if (caller === undefined && !readOpen) {
      unauthorized(response, "Reads need a bearer token or a session (POST /api/session).");
      return;
    }
    if (caller !== undefined) response.locals.caller = caller;
    next();
  };
}

/**
 * Writes through the queue view (when it is not read-only) come with the session cookie: the
 * cookie is SameSite=Strict, and the request must also come from this origin.
 */
export function requireSameOriginSession(options: GuardOptions) {
  const { auth, now } = options;
  return async (request: Request, response: Response, next: NextFunction): Promise<void> => {
    if (request.method === "GET" || request.method === "HEAD") {
      next();
      return;
    }
    const origin = request.get("origin");
    const host = request.get("host");
    const sameOrigin = origin !== undefined && host !== undefined && new URL(origin).host === host;
    const bearer = await bearerCaller(options, request, response);
    if (bearer === null) return;
    const caller =
      bearer ?? (sameOrigin ? auth.fromSession(request.get("cookie"), now()) : undefined);
    if (caller === undefined) {
      unauthorized(response, "Queue changes need a session from this origin or a bearer token.");
      return;
    }
    next();
  };
}
