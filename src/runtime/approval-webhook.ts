import { createHmac, timingSafeEqual } from "../core/node-crypto.js";
import type { ApprovalRequest } from "../store/approval-request.js";

/** Where approval requests are POSTed, and how (SPEC §7.1 "Notifications"). */
export interface ApprovalWebhookOptions {
  /** An `http:` or `https:` URL. */
  url: string;
  /** Signs each body (HMAC-SHA256, `x-harnessx-signature`); at least 16 characters. */
  secret: string;
  /** A delivery that has no answer by then fails and is retried. @defaultValue 10000 */
  timeoutMs?: number | undefined;
  /** Deliveries tried in all before the notice is given up (and logged). @defaultValue 10 */
  attempts?: number | undefined;
  /** The first retry's delay; each next one doubles it. @defaultValue 1000 */
  backoffMs?: number | undefined;
}

/** The header that signs a body: `sha256=<hex HMAC-SHA256 of the body under the secret>`. */
export const SIGNATURE_HEADER = "x-harnessx-signature";
/** The header a receiver dedupes by: the same for every delivery of one call's request. */
export const IDEMPOTENCY_HEADER = "idempotency-key";

/** `sha256=<hex>`: what `x-harnessx-signature` holds for `body` under `secret`. */
export const signatureOf = (body: string, secret: string): string =>
  `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

/** The idempotency key of a request: its run and call. */
export const idempotencyKeyOf = (request: Pick<ApprovalRequest, "runId" | "toolCallId">): string =>
  `${request.runId}:${request.toolCallId}`;

/**
 * POSTs one approval request to the webhook, signed; resolves when it answered 2xx, throws
 * otherwise (an error status, no answer within `timeoutMs`, a refused connection): the notice
 * job is then retried.
 */
export async function postApprovalWebhook(
  webhook: ApprovalWebhookOptions,
  request: ApprovalRequest,
): Promise<void> {
  const body = JSON.stringify(request);
  const response = await fetch(webhook.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "user-agent": "harnessx",
      [SIGNATURE_HEADER]: signatureOf(body, webhook.secret),
      [IDEMPOTENCY_HEADER]: idempotencyKeyOf(request),
    },
    body,
    // A redirect would send the signed body somewhere not configured: it counts as a failure.
    redirect: "manual",
    signal: AbortSignal.timeout(webhook.timeoutMs ?? 10_000),
  });
  // The answer's body is not read: let its connection go.
  await response.body?.cancel().catch(() => {});
  if (response.status < 200 || response.status >= 300) {
    throw new Error(`The approval webhook answered ${response.status} (2xx expected).`);
  }
}

/**
 * For a webhook receiver: whether `signature` (the `x-harnessx-signature` header) signs `body`
 * (the raw request body, as received) under `secret`. Compared in constant time.
 * @example
 * if (!verifyApprovalSignature(rawBody, request.headers["x-harnessx-signature"], secret)) return 401;
 */
export function verifyApprovalSignature(
  body: string | Buffer,
  signature: string | readonly string[] | undefined,
  secret: string,
): boolean {
  if (typeof signature !== "string") return false;
  const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(body).digest("hex")}`);
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
