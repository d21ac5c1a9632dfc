import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import { HarnessError, loggableError } from "../core/errors.js";

/** An error the API answers with its own status and code. */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.code = code;
  }
}

/** HTTP statuses of harnessx error codes (matched by code, so any copy of the package maps). */
const STATUS_BY_CODE: Readonly<Record<string, number>> = {
  run_not_found: 404,
  tool_call_not_found: 404,
  already_decided: 409,
  approval_tampered: 409,
  approver_repeated: 409,
  approval_refused: 400,
  input_too_large: 400,
  config_invalid: 400,
  input_invalid: 400,
  approval_invalid: 400,
  backend_failed: 503,
  backend_unavailable: 503,
  store_lost: 503,
  store_full: 503,
  // The queue view without bull-board installed: the message names the `npm install`.
  dependency_missing: 501,
};

/** Server-side codes whose message is safe and useful to show as it is. */
const SHOWN_SERVER_CODES: ReadonlySet<string> = new Set(["dependency_missing"]);

const codeOf = (error: unknown): string | undefined =>
  error instanceof HarnessError || (error instanceof Error && "code" in error)
    ? String((error as { code: unknown }).code)
    : undefined;

/** What the API answers for an error: its status and `{ code, message }`. */
export interface ErrorAnswer {
  status: number;
  code: string;
  message: string;
}

/**
 * The answer for `error`: an `HttpError`'s own, a harnessx error's by its code (4xx with its
 * message), anything else 500 or 503 with a message that says nothing of its cause, logged.
 */
export function answerFor(error: unknown, logger: Logger): ErrorAnswer {
  if (error instanceof HttpError) {
    return { status: error.status, code: error.code, message: error.message };
  }
  const code = codeOf(error);
  const status = code === undefined ? undefined : STATUS_BY_CODE[code];
  if (
    status !== undefined &&
    code !== undefined &&
    (status < 500 || SHOWN_SERVER_CODES.has(code))
  ) {
    return { status, code, message: (error as Error).message };
  }
  logger.error({ err: loggableError(error) }, "dashboard request failed");
  return {
    status: status ?? 500,
    code: code ?? "internal",
    message:
      status === undefined ? "The dashboard failed to answer." : "The run store is not answering.",
  };
}

/** The last middleware: every error as `{ error: { code, message } }`. */
export function errorResponder(logger: Logger) {
  return (error: unknown, _request: Request, response: Response, _next: NextFunction): void => {
    if (response.headersSent) {
      // A stream that failed midway: it can only end.
      logger.warn({ err: loggableError(error) }, "dashboard stream failed");
      response.end();
      return;
    }
    // express.json() refuses bad JSON with a 400 "entity.parse.failed" error of its own.
    const type = (error as { type?: unknown } | null)?.type;
    if (type === "entity.parse.failed" || type === "entity.too.large") {
      response.status(400).json({
        error: {
          code: "body_invalid",
          message: "The body is not valid JSON of an acceptable size.",
        },
      });
      return;
    }
    const { status, code, message } = answerFor(error, logger);
    response.status(status).json({ error: { code, message } });
  };
}
