import { InternalError } from "../core/errors.js";
import type { ProviderResponse } from "../core/values.js";
import type { PreparedRequest, RunContext } from "../machines/run-machine.js";

// A restored snapshot always carries these in the phases that read them; absence is a bug.
export function requireRequest(context: RunContext): PreparedRequest {
  if (context.request === null) {
    throw new InternalError("The run's snapshot lost its prepared request.");
  }
  return context.request;
}

export function requireResponse(context: RunContext): ProviderResponse {
  if (context.response === null) {
    throw new InternalError("The run's snapshot lost its provider response.");
  }
  return context.response;
}
