// A queue job's link to its run's page, under a mount path or none.
import { describe, expect, it } from "vitest";
import { hostNameOf } from "../../../src/dashboard/host-check.js";
import { runLink } from "../../../src/dashboard/queues.js";

describe("runLink", () => {
  it("links a job to its run's page, under the dashboard's mount path", () => {
    expect(runLink("", { runId: "4f1c9e2a-77", iteration: 1 })).toEqual({
      displayText: "run 4f1c9e2a",
      href: "/#run/4f1c9e2a-77",
    });
    expect(runLink("/harnessx", { runId: "a b/c" })).toEqual({
      displayText: "run a b/c",
      href: "/harnessx/#run/a%20b%2Fc",
    });
  });

  it("points a job without a run id at the runs view", () => {
    for (const data of [null, {}, { runId: 7 }, { runId: "" }]) {
      expect(runLink("", data)).toEqual({ displayText: "no run", href: "/#runs" });
    }
  });
});

describe("hostNameOf", () => {
  it("takes the name of a Host header without its port, lower-cased", () => {
    expect(hostNameOf("Dash.Example.com:4400")).toBe("dash.example.com");
    expect(hostNameOf("127.0.0.1")).toBe("127.0.0.1");
    expect(hostNameOf("[::1]:4400")).toBe("[::1]");
    expect(hostNameOf("[::1")).toBeUndefined();
    expect(hostNameOf("")).toBeUndefined();
    expect(hostNameOf(undefined)).toBeUndefined();
  });
});
