import { describe, expect, it } from "vitest";
import { Agent, type Provider, ProviderError } from "../../../src/index.js";
import { ScriptedProvider, textResponse } from "../../../src/providers/scripted.js";
import { captureLogs } from "../../support/log-capture.js";

// Canaries a custom provider's API echoed back into its error message.
const BEARER = "tok_live_5c1f0e9a7b3d4c2e";
const OPENAI_KEY = "sk-proj-canaryA1b2C3d4E5f6G7h8";
const ANTHROPIC_KEY = "sk-ant-api03-canaryZ9y8X7w6V5";
const QUERY_KEY = "AIzaCanaryQueryKey0042";
const URL_PASSWORD = "Sup3rS3cretPw";
const CANARIES = [BEARER, OPENAI_KEY, ANTHROPIC_KEY, QUERY_KEY, URL_PASSWORD];

const leaky = (error: Error): Provider => ({
  name: "custom",
  complete: () => Promise.reject(error),
});

describe("a provider failure in the run's result and log", () => {
  it("keeps code, retryable and retryAfterMs; scrubs every credential; logs one warn line", async () => {
    const logs = captureLogs("debug");
    const message =
      `upstream said: Authorization: Bearer ${BEARER} was refused; key ${OPENAI_KEY} and ` +
      `${ANTHROPIC_KEY} tried, url https://api.example.com/v1?api_key=${QUERY_KEY} and ` +
      `postgresql://app:${URL_PASSWORD}@db.internal/app`;
    const agent = new Agent({
      provider: leaky(
        new ProviderError(message, {
          code: "rate_limited",
          retryAfterMs: 1500,
          cause: { message },
        }),
      ),
      config: { name: "scrub-agent" },
      logger: logs.logger,
    });

    const result = await agent.run("hi");

    expect(result.status).toBe("failed");
    expect(result.stopReason).toBeNull();
    expect(result.error).toMatchObject({
      name: "ProviderError",
      code: "rate_limited",
      phase: "provider",
      retryable: true,
      retryAfterMs: 1500,
    });
    expect(result.error?.message).toContain("upstream said: Authorization: [redacted]");
    expect(result.error?.message).toContain("postgresql://[redacted]@db.internal/app");
    const everything = JSON.stringify(result) + logs.lines.join("\n");
    for (const canary of CANARIES) expect(everything).not.toContain(canary);

    const warnings = logs.lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      msg: "provider call failed",
      code: "rate_limited",
      agent: "scrub-agent",
      runId: result.runId,
      provider: "custom",
      retryable: true,
      retryAfterMs: 1500,
    });
    expect(warnings[0]).not.toHaveProperty("err");
  });

  it("scrubs a plain Error a custom provider throws, and says it is not retryable", async () => {
    const logs = captureLogs("warn");
    const agent = new Agent({
      provider: leaky(new Error(`bad request with x-api-key: ${OPENAI_KEY}`)),
      logger: logs.logger,
    });

    const result = await agent.run("hi");

    expect(result.error).toMatchObject({ code: "provider_failed", retryable: false });
    expect(result.error?.message).toBe(
      'Provider "custom" failed: bad request with x-api-key: [redacted]',
    );
    expect(logs.lines).toHaveLength(1);
    expect(logs.lines.join("")).not.toContain(OPENAI_KEY);
  });

  it("reports the last response's stop reason", async () => {
    const truncated = { ...textResponse("Once upon a"), stopReason: "max_tokens" as const };
    const agent = new Agent({ provider: new ScriptedProvider([truncated]) });

    const result = await agent.run("Tell me a story");

    expect(result).toMatchObject({ status: "completed", output: "Once upon a" });
    expect(result.stopReason).toBe("max_tokens");
  });
});
