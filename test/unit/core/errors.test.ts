import { describe, expect, it } from "vitest";
import {
  faultOf,
  InternalError,
  jobMayRetry,
  loggableError,
  messageOf,
  toHarnessError,
  toRunError,
} from "../../../src/core/errors.js";
import {
  ApprovalError,
  BackendError,
  ConfigError,
  HarnessError,
  type HarnessErrorCode,
  InputInvalidError,
  MaxIterationsError,
  MiddlewareContractError,
  MiddlewareError,
  ProviderError,
  ProviderMissingError,
  RunCancelledError,
  RunError,
  ToolDefinitionError,
  ToolExecutionError,
  ToolTimeoutError,
} from "../../../src/index.js";

describe("HarnessError", () => {
  it("carries code, message, phase and cause", () => {
    const cause = new Error("socket closed");
    const error = new HarnessError("backend_failed", "Redis is gone.", {
      phase: "dispatch",
      cause,
    });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("HarnessError");
    expect(error.code).toBe("backend_failed");
    expect(error.message).toBe("Redis is gone.");
    expect(error.phase).toBe("dispatch");
    expect(error.cause).toBe(cause);
  });

  it("has no cause or phase unless given", () => {
    const error = new HarnessError("run_not_found", "No such run.");
    expect(error.phase).toBeUndefined();
    expect("cause" in error).toBe(false);
  });

  it("toJSON gives exactly name, code, message and phase", () => {
    const error = new HarnessError("provider_failed", "Model down.", {
      phase: "provider",
      cause: new Error("inner"),
    });
    expect(error.toJSON()).toStrictEqual({
      name: "HarnessError",
      code: "provider_failed",
      message: "Model down.",
      phase: "provider",
    });
  });

  it("toJSON leaves phase out entirely when there is none", () => {
    const json = new ConfigError("bad").toJSON();
    expect(json).toStrictEqual({ name: "ConfigError", code: "config_invalid", message: "bad" });
    expect(Object.keys(json)).toEqual(["name", "code", "message"]);
  });

  it("serialises through JSON.stringify as RunResult.error", () => {
    const error = new MiddlewareError("A.afterLlmCall threw: x", { phase: "afterLlmCall" });
    const parsed: unknown = JSON.parse(JSON.stringify(error));
    expect(parsed).toEqual(error.toJSON());
    expect(RunError.parse(parsed)).toEqual(parsed);
  });
});

describe("HarnessError.isHarnessError", () => {
  it("is true for every harnessx error", () => {
    const errors = [
      new HarnessError("tool_invalid", "x"),
      new ConfigError("x"),
      new ProviderMissingError(),
      new ProviderError("x"),
      new MiddlewareError("x"),
      new MiddlewareContractError("x"),
      new MaxIterationsError(3),
      new RunCancelledError(),
      new ToolDefinitionError("x"),
      new ApprovalError("already_decided", "x"),
    ];
    for (const error of errors) expect(HarnessError.isHarnessError(error)).toBe(true);
  });

  it("is true for an error of another copy of the package, by its registry-symbol marker", () => {
    // What another copy's HarnessError looks like: its own class, the same Symbol.for marker.
    class ForeignHarnessError extends Error {
      code = "provider_failed";
    }
    Object.defineProperty(ForeignHarnessError.prototype, Symbol.for("harnessx.error"), {
      value: true,
    });
    const foreign = new ForeignHarnessError("from elsewhere");
    expect(foreign).not.toBeInstanceOf(HarnessError);
    expect(HarnessError.isHarnessError(foreign)).toBe(true);
  });

  it("is false for a look-alike that has the shape but not the marker", () => {
    class LookAlike extends Error {
      code = "provider_failed";
      toJSON() {
        return { name: this.name, code: this.code, message: this.message };
      }
    }
    expect(HarnessError.isHarnessError(new LookAlike("an SDK error"))).toBe(false);
  });

  it.each([
    ["a plain Error", new Error("x")],
    [
      "an Error with a numeric code",
      Object.assign(new Error("x"), { code: 5, toJSON: () => ({}) }),
    ],
    ["an Error with a code but no toJSON", Object.assign(new Error("x"), { code: "ENOENT" })],
    [
      "a plain object shaped like one",
      { code: "config_invalid", message: "x", toJSON: () => ({}) },
    ],
    ["a string", "config_invalid"],
    ["null", null],
    ["undefined", undefined],
  ])("is false for %s", (_label, value) => {
    expect(HarnessError.isHarnessError(value)).toBe(false);
  });
});

describe("error subclasses", () => {
  it.each<[string, HarnessError, HarnessErrorCode]>([
    ["ConfigError", new ConfigError("bad"), "config_invalid"],
    ["ProviderMissingError", new ProviderMissingError(), "provider_missing"],
    ["ProviderError", new ProviderError("down"), "provider_failed"],
    ["MiddlewareError", new MiddlewareError("threw"), "middleware_failed"],
    ["MiddlewareContractError", new MiddlewareContractError("breach"), "middleware_contract"],
    ["MaxIterationsError", new MaxIterationsError(4), "max_iterations"],
    ["RunCancelledError", new RunCancelledError(), "run_cancelled"],
    ["ToolDefinitionError", new ToolDefinitionError("bad name"), "tool_invalid"],
    ["ApprovalError", new ApprovalError("already_decided", "decided"), "already_decided"],
  ])("%s has its name and code and is a HarnessError", (name, error, code) => {
    expect(error).toBeInstanceOf(HarnessError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(error.code).toBe(code);
    expect(error.toJSON().name).toBe(name);
  });

  it("ProviderMissingError explains the fix and happens in the provider phase", () => {
    const error = new ProviderMissingError();
    expect(error.message).toContain("new Agent({ provider })");
    expect(error.toJSON()).toStrictEqual({
      name: "ProviderMissingError",
      code: "provider_missing",
      message: error.message,
      phase: "provider",
    });
  });

  it("MaxIterationsError names the limit", () => {
    const error = new MaxIterationsError(7);
    expect(error.message).toContain("maxIterations (7)");
    expect(error.phase).toBe("afterTool");
  });

  it("RunCancelledError takes an optional phase and cause", () => {
    expect(new RunCancelledError().toJSON()).toStrictEqual({
      name: "RunCancelledError",
      code: "run_cancelled",
      message: "The run was cancelled.",
    });
    const reason = new Error("user pressed stop");
    const error = new RunCancelledError("provider", reason);
    expect(error.phase).toBe("provider");
    expect(error.cause).toBe(reason);
  });

  it("subclasses pass phase and cause through their options", () => {
    const cause = new Error("inner");
    const error = new ProviderError("Model down.", { phase: "provider", cause });
    expect(error.phase).toBe("provider");
    expect(error.cause).toBe(cause);
  });
});

describe("toHarnessError", () => {
  const asProviderError = (message: string, options: { phase?: string; cause?: unknown }) =>
    new ProviderError(message, options);

  it("returns a HarnessError unchanged", () => {
    const original = new ConfigError("bad");
    expect(toHarnessError(original, asProviderError, "provider")).toBe(original);
  });

  it("wraps an Error with its message and the phase, keeping nothing else of it", () => {
    const thrown = new TypeError("fetch failed");
    const wrapped = toHarnessError(thrown, asProviderError, "provider");
    expect(wrapped).toBeInstanceOf(ProviderError);
    expect(wrapped.message).toBe("fetch failed");
    expect(wrapped.phase).toBe("provider");
    expect(wrapped.cause).toBeUndefined();
  });

  it("wraps a thrown non-Error as its string form", () => {
    const wrapped = toHarnessError(42, asProviderError, "dispatch");
    expect(wrapped.message).toBe("42");
    expect(wrapped.cause).toBeUndefined();
    expect(wrapped.toJSON()).toStrictEqual({
      name: "ProviderError",
      code: "provider_failed",
      message: "42",
      phase: "dispatch",
      retryable: false,
    });
  });
});

describe("hardening: codes, foreign errors and what is kept of them", () => {
  it.each<[string, HarnessError, HarnessErrorCode]>([
    ["InputInvalidError", new InputInvalidError("bad input"), "input_invalid"],
    ["ToolExecutionError", new ToolExecutionError("handler broke"), "tool_failed"],
    ["ToolTimeoutError", new ToolTimeoutError("search", 50), "tool_timeout"],
  ])("%s has its name and code and is a HarnessError", (name, error, code) => {
    expect(error).toBeInstanceOf(HarnessError);
    expect(HarnessError.isHarnessError(error)).toBe(true);
    expect(error.toJSON()).toMatchObject({ name, code });
  });

  it("ToolTimeoutError says which tool timed out after how long", () => {
    expect(new ToolTimeoutError("search", 50).message).toBe('Tool "search" timed out after 50 ms.');
  });

  it("ProviderError takes a code, provider_failed by default", () => {
    expect(new ProviderError("slow", { code: "timeout" }).code).toBe("timeout");
    expect(new ProviderError("down").code).toBe("provider_failed");
  });

  it("toRunError reads another copy's error field by field, whatever its toJSON says", () => {
    class OlderCopyError extends Error {
      override name = "ProviderError";
      code = "provider_failed";
      phase = "provider";
      toJSON() {
        return { name: this.name, message: this.message, secret: "leaked" };
      }
    }
    Object.defineProperty(OlderCopyError.prototype, Symbol.for("harnessx.error"), {
      value: true,
    });
    const foreign = new OlderCopyError("down");
    expect(HarnessError.isHarnessError(foreign)).toBe(true);
    if (!HarnessError.isHarnessError(foreign)) return;
    expect(toRunError(foreign)).toStrictEqual({
      name: "ProviderError",
      code: "provider_failed",
      message: "down",
      phase: "provider",
    });
  });

  it("toHarnessError keeps nothing of a foreign error but its message", () => {
    const sdkError = Object.assign(new Error("Request failed with status 401"), {
      config: { headers: { Authorization: "Bearer canary-7f3a" } },
      toJSON: () => ({ headers: { Authorization: "Bearer canary-7f3a" } }),
    });
    const wrapped = toHarnessError(
      sdkError,
      (message, options) => new ProviderError(message, options),
      "provider",
    );
    expect(JSON.stringify(wrapped)).not.toContain("canary-7f3a");
    expect(JSON.stringify(toRunError(wrapped))).not.toContain("canary-7f3a");
    expect(wrapped.cause).toBeUndefined();
    expect(wrapped.message).toBe("Request failed with status 401");
  });

  it.each<[string, unknown, string]>([
    ["an Error", new Error("boom"), "boom"],
    ["a string", "plain text", "plain text"],
    ["an object with a message", { message: "from an object" }, "from an object"],
    ["a number", 42, "42"],
    ["an object without a message", { code: 1 }, "[object Object]"],
    [
      "a value whose printing throws",
      {
        [Symbol.toPrimitive]() {
          throw new Error("no");
        },
      },
      "(a value that cannot be printed was thrown)",
    ],
  ])("messageOf reads %s", (_label, thrown, message) => {
    expect(messageOf(thrown)).toBe(message);
  });

  it("loggableError copies name, message and stack only", () => {
    const thrown = Object.assign(new TypeError("bad"), {
      config: { headers: { Authorization: "Bearer canary-7f3a" } },
    });
    const copy = loggableError(thrown);
    expect(copy.name).toBe("TypeError");
    expect(copy.message).toBe("bad");
    expect(copy.stack).toBe(thrown.stack);
    expect(Object.keys(copy)).toEqual(["name"]);
    expect(loggableError("text").message).toBe("text");
  });
});

describe("fault and job retries", () => {
  it.each<[string, HarnessError, string]>([
    ["a bad option", new ConfigError("bad"), "caller"],
    ["a bad input", new InputInvalidError("bad"), "caller"],
    ["a provider failure", new ProviderError("down", { code: "unavailable" }), "model"],
    ["a rejected API key", new ProviderError("no", { code: "auth" }), "caller"],
    ["the model looping", new MaxIterationsError(3), "model"],
    ["a tool handler", new ToolExecutionError("threw"), "tool"],
    ["a tool timeout", new ToolTimeoutError("search", 10), "tool"],
    ["a store failure", new BackendError("gone"), "store"],
    ["a corrupt record", new BackendError("bad", { code: "record_corrupt" }), "store"],
    ["a bug", new InternalError("lost"), "internal"],
  ])("%s is %s's fault", (_label, error, fault) => {
    expect(error.fault).toBe(fault);
    expect(faultOf(error.code)).toBe(fault);
  });

  it("keeps fault out of toJSON, which stays RunResult.error", () => {
    const error = new InternalError("lost", { phase: "provider" });
    expect(error.toJSON()).toEqual({
      name: "InternalError",
      code: "internal_error",
      message: "lost",
      phase: "provider",
    });
  });

  it("a code this version does not know is internal and never retried", () => {
    expect(faultOf("from_a_newer_copy")).toBe("internal");
    expect(faultOf("toString")).toBe("internal");
    const foreign = new HarnessError("internal_error", "x");
    Object.defineProperty(foreign, "code", { value: "from_a_newer_copy" });
    expect(jobMayRetry(foreign)).toBe(false);
  });

  it("retries a job only for a passing store or model failure, or a throw it cannot classify", () => {
    expect(jobMayRetry(new BackendError("gone"))).toBe(true);
    expect(jobMayRetry(new BackendError("slow", { code: "backend_unavailable" }))).toBe(true);
    // Redis out of memory: the same step goes on once memory is freed; giving up needs a write.
    const full = new BackendError("full", { code: "store_full" });
    expect(jobMayRetry(full)).toBe(true);
    expect(full.fault).toBe("store");
    expect(jobMayRetry(new ProviderError("busy", { code: "rate_limited" }))).toBe(true);
    expect(jobMayRetry(new Error("socket closed"))).toBe(true);
    expect(jobMayRetry(new BackendError("bad", { code: "record_corrupt" }))).toBe(false);
    expect(jobMayRetry(new BackendError("gone", { code: "store_lost" }))).toBe(false);
    expect(jobMayRetry(new ConfigError("bad"))).toBe(false);
    expect(jobMayRetry(new InternalError("lost"))).toBe(false);
  });
});
