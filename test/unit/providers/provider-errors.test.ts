import { Writable } from "node:stream";
import { inspect } from "node:util";
import pino from "pino";
import { describe, expect, it } from "vitest";
import {
  Agent,
  anthropicProvider,
  ConfigError,
  HookEvent,
  openaiProvider,
  type Provider,
  ProviderError,
  type ProviderErrorCode,
} from "../../../src/index.js";
import type { FakeReply } from "../../../src/testing.js";
import {
  CANARY_KEY,
  collect,
  fakeAnthropic,
  fakeOpenAI,
  jsonFixture,
  rejection,
  request,
  streamOf,
} from "../../support/sdk-fixtures.js";

type Make = (replies: FakeReply[]) => { provider: Provider };
const makers: Array<[string, Make]> = [
  ["openai responses", (replies) => fakeOpenAI(replies)],
  ["openai chat", (replies) => fakeOpenAI(replies, { api: "chat" })],
  ["anthropic", (replies) => fakeAnthropic(replies)],
];
const prefix = (name: string) => (name.startsWith("openai") ? "openai" : "anthropic");

interface Case {
  status: number;
  body: string;
  headers?: Record<string, string>;
  code: ProviderErrorCode;
  retryable: boolean;
  retryAfterMs?: number;
}

const cases = (provider: "openai" | "anthropic"): Case[] => [
  {
    status: 400,
    body: `${provider}-error-400${provider === "openai" ? "-context" : ""}.json`,
    code: "context_too_long",
    retryable: false,
  },
  { status: 401, body: `${provider}-error-401.json`, code: "auth", retryable: false },
  {
    status: 429,
    body: `${provider}-error-429.json`,
    headers: { "retry-after": "7" },
    code: "rate_limited",
    retryable: true,
    retryAfterMs: 7000,
  },
  { status: 500, body: `${provider}-error-500.json`, code: "unavailable", retryable: true },
];

/** Everything a caller could print of an error: message, stack, cause, JSON and inspect. */
const everything = (error: unknown): string =>
  [
    String(error),
    (error as Error).stack,
    JSON.stringify(error),
    inspect(error, { depth: 10, showHidden: true }),
  ].join("\n");

describe.each(makers)("%s errors", (name, make) => {
  it.each(cases(prefix(name)))(
    "HTTP $status → code $code, retryable $retryable",
    async (testCase) => {
      const reply: FakeReply = {
        json: jsonFixture(testCase.body),
        status: testCase.status,
        headers: { "request-id": "req_42", "x-request-id": "req_42", ...testCase.headers },
      };
      const { provider } = make([reply]);
      const error = await rejection(provider.complete(request()));
      expect(error).toBeInstanceOf(ProviderError);
      const providerError = error as ProviderError;
      expect(providerError.code).toBe(testCase.code);
      expect(providerError.retryable).toBe(testCase.retryable);
      expect(providerError.retryAfterMs).toBe(testCase.retryAfterMs);
      expect(providerError.phase).toBe("provider");
      // The cause is plain data: name, message, status and request id, no headers.
      expect(providerError.cause).toStrictEqual({
        name: expect.any(String),
        message: expect.stringContaining(String(testCase.status)),
        status: testCase.status,
        requestId: "req_42",
      });
      // RunResult.error keeps the retry hints (SPEC §11.1).
      expect(providerError.toJSON()).toStrictEqual({
        name: "ProviderError",
        code: testCase.code,
        message: providerError.message,
        phase: "provider",
        retryable: testCase.retryable,
        ...(testCase.retryAfterMs === undefined ? {} : { retryAfterMs: testCase.retryAfterMs }),
      });
      expect(everything(error)).not.toContain(CANARY_KEY);
    },
  );

  it("a 400 that is not about length is bad_request", async () => {
    const body =
      prefix(name) === "openai"
        ? jsonFixture("openai-error-400.json")
        : {
            type: "error",
            error: { type: "invalid_request_error", message: "max_tokens: Field required" },
          };
    const { provider } = make([{ json: body, status: 400 }]);
    expect(await rejection(provider.complete(request()))).toMatchObject({
      code: "bad_request",
      retryable: false,
    });
  });

  it("scrubs the key from a message that echoes it", async () => {
    const echo = {
      error: {
        type: "invalid_request_error",
        message: `Bad key ${CANARY_KEY} given`,
        code: "invalid_api_key",
      },
    };
    const { provider } = make([{ json: echo, status: 401 }]);
    const error = await rejection(provider.complete(request()));
    expect((error as Error).message).toContain("Bad key [redacted] given");
    expect(everything(error)).not.toContain(CANARY_KEY);
  });

  it("an aborted call rejects with code aborted, and does not hang", async () => {
    const { provider } = make([{ hang: true }]);
    const controller = new AbortController();
    const pending = rejection(provider.complete(request(), { signal: controller.signal }));
    controller.abort();
    const error = await pending;
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: "aborted", retryable: false });
  });

  it("an aborted stream rejects with code aborted", async () => {
    const { provider } = make([{ hang: true }]);
    const controller = new AbortController();
    const pending = rejection(
      collect(streamOf(provider, request({ stream: true }), { signal: controller.signal })),
    );
    controller.abort();
    expect(await pending).toMatchObject({ code: "aborted" });
  });

  it("a 401 through a whole agent run leaks the key into no result, hook or log line", async () => {
    const { provider } = make([
      { json: jsonFixture(`${prefix(name)}-error-401.json`), status: 401 },
    ]);
    const lines: string[] = [];
    const logger = pino(
      { level: "trace" },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    );
    const agent = new Agent({ provider, logger });
    const seen: unknown[] = [];
    agent.hooks.on(HookEvent.ERROR, (context) => {
      seen.push(context.data);
      logger.error({ err: context.data.error }, "run failed");
    });
    const result = await agent.run("hello");
    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({ name: "ProviderError", phase: "provider" });
    expect(lines.length).toBeGreaterThan(0);
    expect(seen).toHaveLength(1);
    const produced = [
      JSON.stringify(result),
      ...lines,
      inspect(seen, { depth: 10, showHidden: true }),
    ].join("\n");
    expect(produced).toContain("auth");
    expect(produced).not.toContain(CANARY_KEY);
  });
});

describe("ProviderError", () => {
  it("defaults to provider_failed, not retryable, for a provider that did not classify its failure", () => {
    const error = new ProviderError("down");
    expect(error).toMatchObject({
      code: "provider_failed",
      retryable: false,
      retryAfterMs: undefined,
    });
  });

  it.each<[ProviderErrorCode, boolean]>([
    ["rate_limited", true],
    ["unavailable", true],
    ["timeout", true],
    ["context_too_long", false],
    ["auth", false],
    ["bad_request", false],
    ["aborted", false],
  ])("code %s is retryable by default: %s", (code, retryable) => {
    expect(new ProviderError("x", { code }).retryable).toBe(retryable);
  });

  it("keeps retryable and retryAfterMs on the object and in toJSON (RunResult.error)", () => {
    const error = new ProviderError("slow down", {
      code: "rate_limited",
      retryable: false,
      retryAfterMs: 1500,
      phase: "provider",
    });
    expect(error).toMatchObject({ code: "rate_limited", retryable: false, retryAfterMs: 1500 });
    expect(error.toJSON()).toStrictEqual({
      name: "ProviderError",
      code: "rate_limited",
      message: "slow down",
      phase: "provider",
      retryable: false,
      retryAfterMs: 1500,
    });
  });
});

describe("provider options", () => {
  it("are validated once, naming the path", () => {
    expect(() => openaiProvider({ model: "", apiKey: "k".repeat(20) })).toThrow(ConfigError);
    expect(() => openaiProvider({ model: "", apiKey: "k".repeat(20) })).toThrow(/model:/);
    expect(() =>
      openaiProvider({ model: "m", apiKey: "k".repeat(20), api: "completions" as "chat" }),
    ).toThrow(/api:/);
    expect(() =>
      anthropicProvider({ model: "m", apiKey: "k".repeat(20), baseURL: "not a url" }),
    ).toThrow(/baseURL:/);
    expect(() => anthropicProvider({ model: "m", client: {} as never })).toThrow(
      /client: expected an Anthropic client/,
    );
  });

  it("need a key, a client or the environment variable", () => {
    const saved = { openai: process.env.OPENAI_API_KEY, anthropic: process.env.ANTHROPIC_API_KEY };
    delete process.env.OPENAI_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      expect(() => openaiProvider({ model: "m" })).toThrow(/OPENAI_API_KEY/);
      expect(() => anthropicProvider({ model: "m" })).toThrow(/ANTHROPIC_API_KEY/);
      expect(openaiProvider({ model: "m", apiKey: CANARY_KEY }).name).toBe("openai");
    } finally {
      if (saved.openai !== undefined) process.env.OPENAI_API_KEY = saved.openai;
      if (saved.anthropic !== undefined) process.env.ANTHROPIC_API_KEY = saved.anthropic;
    }
  });
});
