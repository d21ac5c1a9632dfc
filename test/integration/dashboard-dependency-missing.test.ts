import type { AddressInfo } from "node:net";
import express from "express";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DependencyMissingError } from "../../src/core/dependency-missing.js";
import { errorResponder } from "../../src/dashboard/http-errors.js";
import { BULL_BOARD } from "../../src/dashboard/load-bull-board.js";

// The queue view's packages are installed here (devDependencies), so the failure a missing
// bull-board gives its route is thrown by hand, through the dashboard's own error responder.
describe("the dashboard's answer when an optional package is missing", () => {
  let server: ReturnType<ReturnType<typeof express>["listen"]>;
  let base: string;
  beforeAll(async () => {
    const app = express();
    app.get("/admin/queues", (_request, _response, next) => {
      next(
        new DependencyMissingError({ feature: BULL_BOARD.feature, packages: BULL_BOARD.packages }),
      );
    });
    app.get("/broken", () => {
      throw new Error("secret internals");
    });
    app.use(errorResponder(pino({ level: "silent" })));
    server = app.listen(0, "127.0.0.1");
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("is 501 with the npm install command, not a bare 500", async () => {
    const answer = await fetch(`${base}/admin/queues`);
    expect(answer.status).toBe(501);
    expect(await answer.json()).toEqual({
      error: {
        code: "dependency_missing",
        message: expect.stringContaining(
          'npm install "@bull-board/api@^9.10.2" "@bull-board/express@^9.10.1"',
        ),
      },
    });
  });

  it("still hides the message of an unexpected failure", async () => {
    const answer = await fetch(`${base}/broken`);
    expect(answer.status).toBe(500);
    expect(await answer.json()).toEqual({
      error: { code: "internal", message: "The dashboard failed to answer." },
    });
  });
});
