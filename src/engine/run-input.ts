import { InputInvalidError } from "../core/errors.js";
import { jsonProblem } from "../core/json-value.js";
import { Message } from "../core/values.js";
import { describeIssues } from "../tools/validate.js";

/**
 * A run's input as messages: a string is one user message; messages must be plain JSON data
 * (they are stored, hashed and sent to the model), not too deeply nested, without cycles.
 * @throws InputInvalidError naming the problem, never a raw `RangeError` or `TypeError`
 */
export function toMessages(input: string | readonly Message[]): Message[] {
  if (typeof input === "string") {
    return [{ role: "user", content: [{ type: "text", text: input }] }];
  }
  const parsed = Message.array().min(1).safeParse(input);
  if (!parsed.success) {
    throw new InputInvalidError(`Invalid run input: ${describeIssues(parsed.error.issues)}`);
  }
  const problem = jsonProblem(input);
  if (problem !== undefined) throw new InputInvalidError(`Invalid run input: it ${problem}.`);
  return input as Message[];
}
