import { REDACTED } from "./secret-keys.js";

// Credential shapes a provider's error message may echo back (SPEC §11.1 "Errors in results").
// Each keeps the words around the credential, so the message still says what went wrong.
const CREDENTIAL_PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  // A header line: everything after the header's name is the credential.
  [
    /\b(authorization|proxy-authorization|x-api-key|api-key)(["']?\s*[:=]\s*)[^\n\r,;}]+/gi,
    `$1$2${REDACTED}`,
  ],
  [/\bBearer\s+[\w.~+/=-]+/gi, `Bearer ${REDACTED}`],
  [/\bsk-ant-[\w-]+/g, REDACTED],
  [/\bsk-[\w-]{6,}/g, REDACTED],
  // api_key=…, apiKey: "…", access_token=…, ?key=… in a URL.
  [
    /\b(api[_-]?key|access[_-]?token|secret|password|token|key)(["']?\s*[:=]\s*["']?)[^\s"'&,;}]+/gi,
    `$1$2${REDACTED}`,
  ],
  // scheme://user:password@host
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@:]+:[^\s/@]+@/gi, `$1${REDACTED}@`],
];

/**
 * A message with every credential-shaped part (`Bearer …`, `sk-…`, `sk-ant-…`, `api_key=…`,
 * `Authorization: …`, a URL's user:password) and every given secret (8 characters or more)
 * replaced by `[redacted]`.
 */
export function scrubCredentials(text: string, secrets: readonly string[] = []): string {
  let clean = text;
  for (const secret of secrets) {
    if (secret.length >= 8) clean = clean.replaceAll(secret, REDACTED);
  }
  for (const [pattern, replacement] of CREDENTIAL_PATTERNS) {
    clean = clean.replace(pattern, replacement);
  }
  return clean;
}
