import type {
  JsonValue,
  Message,
  ProviderResponse,
  RunError,
  StopReason,
  ToolResult,
  ToolSchema,
  Usage,
} from "../core/values.js";
import type { CallState } from "./call-state.js";

// The run's context and a person's decision, apart from the machine: the public types need
// them, but not XState's (whose declarations fail a consumer's strict lib check).

/** A call whose handler a crash interrupted, to be asked about again (durable runs). */
export interface InterruptedCall {
  toolCallId: string;
  /** What the person is told. */
  reason: string;
  /** Binds the new approval to this exact input. */
  inputHash: string;
}

/** The request being prepared for the provider. */
export interface PreparedRequest {
  system: string;
  messages: Message[];
  tools: ToolSchema[];
  prefixKey: string | null;
}

/**
 * The run's position: phase data, iteration, ids and counts. The conversation is not here: it
 * is the run's append-only message log (`RunEnv.conversation` while a process runs it, the
 * store's message list while it rests), of which the run holds the first `messageCount`.
 */
export interface RunContext {
  runId: string;
  sessionId: string;
  maxIterations: number;
  /** Provider calls started so far. */
  iteration: number;
  /** How many messages of the run's log are its conversation (the input's first). */
  messageCount: number;
  usage: Usage;
  request: PreparedRequest | null;
  /** The raw provider response, between `provider` and `afterLlm`. */
  response: ProviderResponse | null;
  /** How long the provider took for `response`. */
  responseMs: number;
  calls: CallState[];
  /** Raw handler outcomes by call id, committed before post-processing. */
  raw: Record<string, ToolResult>;
  /** The final text, or with `config.output` the parsed value. */
  output: JsonValue | null;
  error: RunError | null;
  /** The last provider response's stop reason (absent in snapshots saved before it existed). */
  stopReason?: StopReason | null;
  /**
   * The agent the run is under now: the started one until a handoff moves it (absent in
   * snapshots saved before handoffs existed: then the run's own agent).
   */
  agent?: string;
  /** Final answers that did not match `config.output` so far (absent: none). */
  outputFailures?: number;
}

export interface RunInput {
  runId: string;
  sessionId: string;
  /** The input's messages: the first of the run's log. */
  messageCount: number;
  maxIterations: number;
  /** The agent the run starts under. */
  agent?: string;
}

/** A person's decision on one waiting call, as the machine applies it (SPEC §7.1). */
export interface Decision {
  decision: "allow" | "deny" | "respond";
  reason?: string;
  by?: string;
  /** An allow's edited input (checked before it gets here) and its approval hash. */
  input?: Record<string, unknown>;
  inputHash?: string;
  /** A respond's answer: the call's result; the handler never runs. */
  content?: string;
  isError?: boolean;
  /** When it was decided: a quorum approval's `at`. */
  at?: number;
  /** An allow whose quorum was counted elsewhere (a durable run's call ledger): it is final. */
  quorumMet?: boolean;
}
