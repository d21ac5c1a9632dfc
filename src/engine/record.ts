import type { Message } from "../core/values.js";
import type { RecorderEntry } from "../features/recorder/entry.js";
import type { CallState, RunContext } from "../machines/run-machine.js";
import { redactInputsOnly, type SecretInputs } from "../tools/secret-inputs.js";
import type { RunEnv } from "./run-env.js";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An entry as a stage describes it; the run, iteration and time are filled in here. */
export type StageEntry = DistributiveOmit<RecorderEntry, "runId" | "iteration" | "at">;

/**
 * Hands entries to the run's flight recorder, if it has one. A recorder that fails loses the
 * entry, never the run: the failure is logged with the entry's type only, never its data.
 */
export async function record(
  env: RunEnv,
  context: Pick<RunContext, "runId" | "iteration">,
  ...entries: StageEntry[]
): Promise<void> {
  const recorder = env.recorder;
  if (recorder === undefined) return;
  const secrets = env.tools.secretInputs();
  for (const entry of entries) {
    try {
      await recorder.record(
        withoutSecretInputs(
          {
            ...entry,
            runId: context.runId,
            iteration: context.iteration,
            at: env.clock.now(),
          } as RecorderEntry,
          secrets,
        ),
      );
    } catch (error) {
      env.logger.warn(
        { entryType: entry.type, reason: error instanceof Error ? error.name : typeof error },
        "the flight recorder failed; entry lost",
      );
    }
  }
}

// Redacted copies of messages by the secret marks they were redacted for: successive requests
// of a run share their messages, so each is redacted once (recording stays linear).
const redactedMessages = new WeakMap<SecretInputs, WeakMap<Message, Message>>();

/**
 * The entry with every secret tool input field redacted, by the one rule used everywhere:
 * marked in its tool's schema, or named like a secret (`password`, `token`… `SECRET_KEYS`).
 */
function withoutSecretInputs(entry: RecorderEntry, secrets: SecretInputs): RecorderEntry {
  let cache = redactedMessages.get(secrets);
  if (cache === undefined) {
    cache = new WeakMap();
    redactedMessages.set(secrets, cache);
  }
  const known = cache;
  const message = (each: Message): Message => {
    let copy = known.get(each);
    if (copy === undefined) {
      copy = redactInputsOnly(each, secrets);
      known.set(each, copy);
    }
    return copy;
  };
  if (entry.type === "llm_request") {
    return {
      ...entry,
      request: { ...entry.request, messages: entry.request.messages.map(message) },
    };
  }
  if (entry.type === "run_start") return { ...entry, input: entry.input.map(message) };
  return redactInputsOnly(entry, secrets);
}

const DECISION_OF = {
  allowed: "allow",
  approved: "allow",
  denied: "deny",
  rejected: "deny",
  responded: "respond",
  asked: "ask",
  invalid: "invalid",
} as const;

/** Decision entries for calls whose status `source` set (all calls when `before` is absent). */
export function decisionEntries(
  calls: readonly CallState[],
  source: "policy" | "recheck" | "person",
  before?: readonly CallState[],
): StageEntry[] {
  return calls
    .filter((state, index) => before === undefined || before[index]?.status !== state.status)
    .map((state) => ({
      type: "decision",
      toolCallId: state.call.id,
      name: state.call.name,
      decision: DECISION_OF[state.status],
      source,
      reason: state.reason,
      ...(state.decidedBy === undefined ? {} : { by: state.decidedBy }),
    }));
}
