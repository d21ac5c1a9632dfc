import { ConfigError } from "../core/errors.js";
import { Message } from "../core/values.js";
import { describeIssues } from "../tools/validate.js";

/** A run's input as messages: a string is one user message. */
export function toMessages(input: string | readonly Message[]): Message[] {
  if (typeof input === "string") {
    return [{ role: "user", content: [{ type: "text", text: input }] }];
  }
  const parsed = Message.array().min(1).safeParse(input);
  if (!parsed.success) {
    throw new ConfigError(`Invalid run input: ${describeIssues(parsed.error.issues)}`);
  }
  return parsed.data;
}
