import { z } from "zod";
import { MAX_TIMEOUT_MS } from "../core/deadline.js";
import { ConfigError } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import { DEFAULT_TOOL_TIMEOUT_MS } from "../tools/tool.js";
import { describeIssues } from "../tools/validate.js";

/** Static configuration of an agent. Every field is optional. */
export const AgentConfig = lazySchema(() =>
  z.object({
    /**
     * How a runtime finds this agent.
     * @defaultValue "agent"
     */
    name: z.string().min(1).default("agent"),
    /** @defaultValue "default" */
    model: z.string().min(1).default("default"),
    /** @defaultValue "" */
    systemPrompt: z.string().default(""),
    /** @defaultValue 4096 */
    maxTokens: z.number().int().positive().default(4096),
    /** @defaultValue 1 */
    temperature: z.number().min(0).max(2).default(1),
    /** Provider calls one run may make. @defaultValue 20 */
    maxIterations: z.number().int().positive().default(20),
    /** Sends a prompt-cache key with each request. @defaultValue true */
    promptCaching: z.boolean().default(true),
    /** Tokens of conversation kept after trimming (estimated at 4 characters a token). @defaultValue 100000 */
    contextWindow: z.number().int().positive().default(100_000),
    /** How long a tool call may run unless its tool sets `timeoutMs`. @defaultValue 300000 */
    toolTimeoutMs: z.number().int().positive().max(MAX_TIMEOUT_MS).default(DEFAULT_TOOL_TIMEOUT_MS),
    /** How long one provider call may take; past it the run fails (`ProviderError`, code "timeout"). @defaultValue 600000 */
    providerTimeoutMs: z.number().int().positive().max(MAX_TIMEOUT_MS).default(600_000),
    /**
     * A durable runtime's limits on this model's calls, shared by every run of every agent with
     * the same provider name and model in every process of the backend, spread evenly over the
     * minute (300 requests a minute is 5 a second). Tokens are counted after each call.
     */
    rateLimit: z
      .strictObject({
        requestsPerMinute: z.number().int().positive().optional(),
        tokensPerMinute: z.number().int().positive().optional(),
      })
      .optional(),
    /**
     * How long a durable run's model call may wait for its rate limit (or a provider's
     * `rate_limited` pause) in all before the run fails. @defaultValue 600000
     */
    rateLimitWaitMs: z.number().int().nonnegative().max(MAX_TIMEOUT_MS).default(600_000),
    /**
     * In a durable runtime, calls still awaiting a decision this long after the run parked are
     * denied with reason "approval timed out" (by "harnessx") and the run goes on.
     */
    approvalTimeoutMs: z.number().int().positive().max(MAX_TIMEOUT_MS).optional(),
    /**
     * How deep this agent's runs may start child runs (`agent.asTool`): a call that would start a
     * run deeper than this (the top run is depth 0) gets an error result, code `depth_exceeded`.
     * @defaultValue 5
     */
    maxDepth: z.number().int().nonnegative().max(100).default(5),
    /**
     * A zod schema the final answer must match, as JSON: `RunResult.output` is then the parsed
     * value. Asked for natively where the provider can (see `ProviderRequest.output`).
     */
    output: z
      .custom<z.ZodType>((value) => value instanceof z.ZodType, "must be a zod schema")
      .optional(),
    /**
     * How many times an answer that does not match `output` is sent back to the model with what
     * failed before the run fails with code `output_invalid`. @defaultValue 2
     */
    outputRetries: z.number().int().nonnegative().max(100).default(2),
  }),
);
/**
 * An agent's static configuration, for an agent that answers in text. With a structured
 * output (`output: schema`), its type is `AgentConfigFor<TOutput>` (what `new Agent` infers).
 */
export type AgentConfig = Omit<z.input<typeof AgentConfig>, "output">;
export type ResolvedAgentConfig = z.output<typeof AgentConfig>;

export function parseAgentConfig(config: unknown = {}): ResolvedAgentConfig {
  const parsed = AgentConfig.strict().safeParse(config);
  if (!parsed.success) {
    throw new ConfigError(`Invalid agent config: ${describeIssues(parsed.error.issues)}`);
  }
  return parsed.data;
}
