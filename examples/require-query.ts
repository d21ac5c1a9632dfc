// Pipeline injection through the constructor: a MiddlewarePipeline built first, then handed to
// `new Agent({ middleware: pipeline })`. RequireQuery throws on a blank query; a throwing
// middleware fails the run (status "failed", a named error) and is never a request for approval.
import { z } from "zod";
import { Agent, Middleware, MiddlewarePipeline, type ToolCall, tool } from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

class RequireQuery extends Middleware {
  override async beforeToolExecution(call: ToolCall): Promise<ToolCall> {
    if (call.name === "search" && String(call.input.query ?? "").trim() === "") {
      throw new Error("Search query must not be blank");
    }
    return call;
  }
}

const pipeline = new MiddlewarePipeline();
const registration = pipeline.add(new RequireQuery());

// This shows pipeline injection; the application's tools are registered separately.
const search = tool({
  name: "search",
  description: "Return a fixture search result for the requested query.",
  input: z.object({ query: z.string() }),
  handler: async ({ query }) => `Results for ${query}`,
});

const provider = new ScriptedProvider([
  toolCallResponse([{ name: "search", input: { query: "   " } }]),
  toolCallResponse([{ name: "search", input: { query: "durable runs" } }]),
  textResponse("Durable runs survive a crash."),
]);

const agent = new Agent({ provider, tools: [search], middleware: pipeline });
console.log(`agent.middleware is the injected pipeline: ${agent.middleware === pipeline}`);

const blank = await agent.run("Search for nothing");
// Not "awaiting_approval": use a PermissionManager rule with decision "ask" for approvals.
console.log(`blank query: status ${blank.status}, pending ${blank.pending.length}`);
console.log(`error: ${blank.error?.name} in ${blank.error?.phase}: ${blank.error?.message}`);

const good = await agent.run("What are durable runs?");
console.log(`real query: status ${good.status}: ${good.output}`);

registration.close();
console.log(`after close the pipeline holds ${pipeline.size} middleware`);
