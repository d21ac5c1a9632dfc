import { describe, expect, it } from "vitest";
import { z } from "zod";
import { lazySchema } from "../../../src/core/lazy-schema.js";
import { RunStatus } from "../../../src/core/values.js";
import { RUN_RECORD_STATUSES } from "../../../src/store/schemas.js";

describe("lazySchema", () => {
  it("builds the schema on first use, once", () => {
    let builds = 0;
    const Point = lazySchema(() => {
      builds += 1;
      return z.object({ x: z.number(), y: z.number() });
    });
    expect(builds).toBe(0);
    expect(Point.parse({ x: 1, y: 2 })).toEqual({ x: 1, y: 2 });
    expect(Point.safeParse({ x: "1" }).success).toBe(false);
    expect(builds).toBe(1);
  });

  it("acts as the schema it builds: composed, extended, instanceof, spread", () => {
    const Inner = lazySchema(() => z.object({ id: z.string().min(1) }));
    const Outer = z.object({ items: z.array(Inner) });
    expect(Outer.parse({ items: [{ id: "a" }] })).toEqual({ items: [{ id: "a" }] });
    expect(() => Outer.parse({ items: [{ id: "" }] })).toThrow(z.ZodError);
    expect(Inner).toBeInstanceOf(z.ZodObject);
    expect(Object.keys(Inner.shape)).toEqual(["id"]);
    expect(Inner.extend({ n: z.number() }).parse({ id: "b", n: 1 })).toEqual({ id: "b", n: 1 });
    const fields = lazySchema(() => ({ a: z.string(), b: z.number().optional() }));
    expect(z.object({ ...fields }).parse({ a: "x" })).toEqual({ a: "x" });
    expect(z.toJSONSchema(Inner)).toMatchObject({ type: "object", required: ["id"] });
  });

  it("recurses through z.lazy without building at definition", () => {
    type Tree = { name: string; children: Tree[] };
    const Tree: z.ZodType<Tree> = lazySchema(() =>
      z.object({ name: z.string(), children: z.array(z.lazy(() => Tree)) }),
    );
    const tree = { name: "a", children: [{ name: "b", children: [] }] };
    expect(Tree.parse(tree)).toEqual(tree);
    expect(Tree.safeParse({ name: "a", children: [{ name: 1, children: [] }] }).success).toBe(
      false,
    );
  });
});

describe("RUN_RECORD_STATUSES", () => {
  // Written out so that importing builds no schema; it must still list every status.
  it("lists queued, running, waiting, then every RunStatus in its order", () => {
    expect(RUN_RECORD_STATUSES).toEqual(["queued", "running", "waiting", ...RunStatus.options]);
  });
});
