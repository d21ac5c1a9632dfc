// The Agent and its values: every constructor option is optional, a run returns a plain
// RunResult that JSON round-trips unchanged, an input may be a string or Message[], and a run
// without a provider fails at once with a named error. `await using` closes the agent.
import { Agent, type Message, RunResult } from "../src/index.js";
import { ScriptedProvider, textResponse } from "../src/testing.js";

// No provider: the run fails at once, with a clear, named error (match errors by name or code).
const bare = new Agent();
const failed = await bare.run("Hello?");
console.log(`no provider: ${failed.status}, ${failed.error?.name}: ${failed.error?.message}`);

const greeter = new Agent({
  provider: new ScriptedProvider([textResponse("Hello!"), textResponse("Still here.")]),
  config: { name: "greeter", systemPrompt: "You are brief.", maxIterations: 4 },
});
{
  await using agent = greeter; // closed at the end of this block
  const result = await agent.run("Hi", { sessionId: "session-1" });
  console.log(`${agent.name}: ${result.status}, output ${JSON.stringify(result.output)}`);
  console.log(
    `session ${result.sessionId}, iterations ${result.iterations}, tokens in ${result.usage.inputTokens}`,
  );

  // Results are plain data: JSON round-trips them unchanged, and the zod schema accepts them.
  const copy: unknown = JSON.parse(JSON.stringify(result));
  console.log(`JSON round-trip unchanged: ${JSON.stringify(copy) === JSON.stringify(result)}`);
  console.log(`RunResult schema accepts it: ${RunResult.safeParse(copy).success}`);

  // Continue a conversation by passing messages.
  const history: Message[] = [
    ...result.messages,
    { role: "user", content: [{ type: "text", text: "Still there?" }] },
  ];
  const next = await agent.run(history, { sessionId: "session-1" });
  console.log(`with history (${history.length} messages): ${next.output}`);
  console.log(`started while in use: ${agent.started}`);
}
console.log(`started after the block: ${greeter.started}`);
