import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DependencyMissingError, isMissingPackage } from "../../../src/core/dependency-missing.js";
import { HarnessError } from "../../../src/core/errors.js";
import { RATE_LIMITER } from "../../../src/core/load-rate-limiter.js";
import {
  importOptional,
  type LazyPackage,
  lazyValue,
  requireOptional,
} from "../../../src/core/optional-dependency.js";
import { BULL_BOARD } from "../../../src/dashboard/load-bull-board.js";
import { EXPRESS } from "../../../src/dashboard/load-express.js";
import { MINISEARCH } from "../../../src/features/knowledge/load-minisearch.js";
import { YAML } from "../../../src/features/skills/load-yaml.js";
import { ANTHROPIC_SDK } from "../../../src/providers/load-anthropic.js";
import { MCP_SDK } from "../../../src/providers/load-mcp.js";
import { OPENAI_SDK } from "../../../src/providers/load-openai.js";
import { IOREDIS } from "../../../src/runtime/load-ioredis.js";

const ABSENT: LazyPackage = {
  feature: "theFeature",
  packages: [
    { name: "harnessx-no-such-package", range: "^1.2.0" },
    { name: "@harnessx/no-such-helper", range: "^2.0.0" },
  ],
};

describe("DependencyMissingError", () => {
  it("names the feature, the packages and the npm install command, with a stable code", () => {
    const error = new DependencyMissingError({
      feature: ABSENT.feature,
      packages: ABSENT.packages,
    });
    expect(HarnessError.isHarnessError(error)).toBe(true);
    expect(error.code).toBe("dependency_missing");
    expect(error.packages).toEqual(["harnessx-no-such-package", "@harnessx/no-such-helper"]);
    expect(error.install).toBe(
      'npm install "harnessx-no-such-package@^1.2.0" "@harnessx/no-such-helper@^2.0.0"',
    );
    expect(error.message).toBe(
      "theFeature needs harnessx-no-such-package and @harnessx/no-such-helper, an optional " +
        "dependency of harnessx that is not installed: run " +
        '`npm install "harnessx-no-such-package@^1.2.0" "@harnessx/no-such-helper@^2.0.0"`.',
    );
    expect(error.toJSON()).toEqual({
      name: "DependencyMissingError",
      code: "dependency_missing",
      message: error.message,
    });
  });

  it("tells a missing package from another one missing and from other failures", () => {
    const notFound = (message: string, code: string) => Object.assign(new Error(message), { code });
    expect(
      isMissingPackage(
        notFound("Cannot find module 'express'\nRequire stack: …", "MODULE_NOT_FOUND"),
        "express",
      ),
    ).toBe(true);
    expect(
      isMissingPackage(
        notFound(
          "Cannot find package '@modelcontextprotocol/sdk' imported from /x/mcp-connection.js",
          "ERR_MODULE_NOT_FOUND",
        ),
        "@modelcontextprotocol/sdk",
      ),
    ).toBe(true);
    expect(
      isMissingPackage(
        notFound("Cannot find module 'express-extra'", "MODULE_NOT_FOUND"),
        "express",
      ),
    ).toBe(false);
    expect(isMissingPackage(new Error("Cannot find module 'express'"), "express")).toBe(false);
    expect(isMissingPackage("Cannot find module 'express'", "express")).toBe(false);
  });
});

describe("loading on first use", () => {
  it("requireOptional turns a package that is not installed into DependencyMissingError", () => {
    const thrown = (() => {
      try {
        requireOptional(ABSENT);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(DependencyMissingError);
    expect(thrown).toMatchObject({
      code: "dependency_missing",
      install: 'npm install "harnessx-no-such-package@^1.2.0" "@harnessx/no-such-helper@^2.0.0"',
    });
  });

  it("requireOptional gives an installed CommonJS package", () => {
    const yaml = requireOptional<{ parse(text: string): unknown }>(YAML);
    expect(yaml.parse("a: 1")).toEqual({ a: 1 });
  });

  it("importOptional turns a failed import of the package into DependencyMissingError", async () => {
    const failure = Object.assign(
      new Error("Cannot find package 'harnessx-no-such-package' imported from /x/y.js"),
      { code: "ERR_MODULE_NOT_FOUND" },
    );
    await expect(importOptional(ABSENT, () => Promise.reject(failure))).rejects.toMatchObject({
      name: "DependencyMissingError",
      code: "dependency_missing",
      packages: ["harnessx-no-such-package", "@harnessx/no-such-helper"],
      cause: failure,
    });
  });

  it("importOptional lets any other failure through as it is", async () => {
    const broken = new SyntaxError("Unexpected token in the package");
    await expect(importOptional(ABSENT, () => Promise.reject(broken))).rejects.toBe(broken);
    const otherMissing = Object.assign(new Error("Cannot find package 'left-pad' imported"), {
      code: "ERR_MODULE_NOT_FOUND",
    });
    await expect(importOptional(ABSENT, () => Promise.reject(otherMissing))).rejects.toBe(
      otherMissing,
    );
  });

  it("lazyValue loads nothing until used, then once, and acts as the real class", () => {
    class Real {
      static kind = "real";
      constructor(readonly value: number) {}
      double(): number {
        return this.value * 2;
      }
    }
    let loads = 0;
    const StandIn: typeof Real = lazyValue(() => {
      loads += 1;
      return Real;
    });
    expect(loads).toBe(0);
    const made = new StandIn(21);
    expect(made).toBeInstanceOf(Real);
    expect(made).toBeInstanceOf(StandIn);
    expect(made.double()).toBe(42);
    expect({}).not.toBeInstanceOf(StandIn);
    expect(StandIn.kind).toBe("real");
    expect(loads).toBe(1);
  });

  it("lazyValue can be subclassed: the subclass's instances keep the subclass's methods", () => {
    class Real {
      constructor(readonly value: number) {}
      double(): number {
        return this.value * 2;
      }
    }
    const StandIn: typeof Real = lazyValue(() => Real);
    class Sub extends StandIn {
      triple(): number {
        return this.value * 3;
      }
    }
    const made = new Sub(7);
    expect(made).toBeInstanceOf(Sub);
    expect(made).toBeInstanceOf(Real);
    expect(made.triple()).toBe(21);
    expect(made.double()).toBe(14);
  });

  it("lazyValue calls a function through, and fails on first use when the package is missing", () => {
    const join: (...parts: string[]) => string = lazyValue(
      () =>
        (...parts: string[]) =>
          parts.join("+"),
    );
    expect(join("a", "b")).toBe("a+b");
    const missing: () => void = lazyValue(() => requireOptional<() => void>(ABSENT));
    expect(() => missing()).toThrow(DependencyMissingError);
  });
});

describe("the seams", () => {
  const manifest = JSON.parse(
    readFileSync(new URL("../../../package.json", import.meta.url), "utf8"),
  ) as {
    dependencies: Record<string, string>;
    peerDependencies: Record<string, string>;
    peerDependenciesMeta: Record<string, { optional?: boolean }>;
    devDependencies: Record<string, string>;
  };

  it("name the optional peer dependencies with package.json's ranges, and the tests install them", () => {
    for (const seam of [OPENAI_SDK, ANTHROPIC_SDK, MCP_SDK, EXPRESS, BULL_BOARD]) {
      for (const { name, range } of seam.packages) {
        expect({ name, range }).toEqual({ name, range: manifest.peerDependencies[name] });
        expect(manifest.peerDependenciesMeta[name]).toEqual({ optional: true });
        expect(manifest.devDependencies[name]).toBeDefined();
        expect(manifest.dependencies[name]).toBeUndefined();
      }
    }
  });

  it("name the regular dependencies loaded on first use with package.json's ranges", () => {
    for (const seam of [IOREDIS, YAML, MINISEARCH, RATE_LIMITER]) {
      for (const { name, range } of seam.packages) {
        expect({ name, range }).toEqual({ name, range: manifest.dependencies[name] });
      }
    }
  });
});
