import { recordById } from "./id-record.js";

/**
 * Names of the input fields harnessx treats as secret wherever it shows or logs a tool input:
 * the logger censors them and the dashboard never shows their values. A tool marks an input
 * secret by naming it so (`{ password }`, `{ apiKey }`, `{ token }`…).
 */
export const SECRET_KEYS = ["apiKey", "authorization", "password", "token", "secret"] as const;

const SECRET = new Set<string>(SECRET_KEYS.map((key) => key.toLowerCase()));

export const REDACTED = "[redacted]";

/** True when a field of this name holds a secret (names compared without case). */
export const isSecretKey = (key: string): boolean => SECRET.has(key.toLowerCase());

/** True when a JSON value has a field named like a secret, at any depth. */
export function hasSecretKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasSecretKey);
  if (value === null || typeof value !== "object") return false;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (isSecretKey(key) || hasSecretKey((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

/** A copy of a JSON value with every secret field's value replaced by `[redacted]`, at any depth. */
export function redactSecrets<T>(value: T): T {
  return redact(value) as T;
}

function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value === null || typeof value !== "object") return value;
  return recordById(
    Object.entries(value).map(
      ([key, each]) => [key, isSecretKey(key) ? REDACTED : redact(each)] as const,
    ),
  );
}
