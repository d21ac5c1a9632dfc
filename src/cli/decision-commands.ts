import { userInfo } from "node:os";
import type { Command } from "commander";
import type { Agent } from "../engine/agent.js";
import type { AgentRuntime } from "../runtime/agent-runtime.js";
import { printJson, UsageError, withJson } from "./cli-support.js";
import { type RedisFlags, withRedisOptions, withRedisRuntime } from "./redis-runtime.js";
import { loadAgents } from "./worker.js";

// `harnessx approve|deny|respond`: record a person's decision on a Redis runtime with no workers;
// the workers elsewhere act on it. An edit (`approve --input`) is checked with the run's agent
// (its tool's schema and policy), loaded from `--agents MODULE` as `harnessx worker` loads it.

interface DecisionFlags extends RedisFlags {
  json?: boolean;
  reason?: string;
  by: string;
  input?: string;
  agents?: string;
}

interface RespondFlags extends DecisionFlags {
  content: string;
  error?: boolean;
}

/** Who decides (or cancels) when `--by` is not given: the user running the command. */
export function currentUser(): string {
  try {
    return userInfo().username;
  } catch {
    return "harnessx-cli";
  }
}

/** `--input JSON`, parsed: a JSON object, else a usage error (exit code 2). */
function parseInput(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--input must be JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new UsageError("--input must be a JSON object (the tool call's whole input)");
  }
  return value as Record<string, unknown>;
}

type Verb = "approve" | "deny" | "respond";

async function decide(
  verb: Verb,
  runId: string,
  toolCallId: string,
  flags: DecisionFlags | RespondFlags,
): Promise<void> {
  const input = flags.input === undefined ? undefined : parseInput(flags.input);
  if (input !== undefined && flags.agents === undefined) {
    throw new UsageError(
      "approve --input needs --agents MODULE: the run's agent checks the edit against its tool's schema and policy",
    );
  }
  const agents: Agent[] = flags.agents === undefined ? [] : await loadAgents(flags.agents);
  const by = { by: flags.by, ...(flags.reason === undefined ? {} : { reason: flags.reason }) };
  const act = (runtime: AgentRuntime): Promise<void> => {
    if (verb === "deny") return runtime.deny(runId, toolCallId, by);
    if (verb === "approve") {
      return runtime.approve(runId, toolCallId, {
        ...by,
        ...(input === undefined ? {} : { input }),
      });
    }
    const { content, error } = flags as RespondFlags;
    return runtime.respond(runId, toolCallId, { ...by, content, isError: error === true });
  };
  await withRedisRuntime(flags, verb, act, agents);
  const decided = verb === "approve" ? "allow" : verb;
  if (flags.json === true) {
    return printJson({
      runId,
      toolCallId,
      decided,
      by: flags.by,
      reason: flags.reason ?? null,
      ...(input === undefined ? {} : { input }),
    });
  }
  const done = { approve: "approved", deny: "denied", respond: "answered" }[verb];
  console.log(
    `${done} ${toolCallId} of run ${runId} as "${flags.by}"${input === undefined ? "" : " with an edited input"}; the run goes on on a worker`,
  );
}

/** A decision command's arguments and common options. */
function decisionCommand(program: Command, verb: Verb, description: string): Command {
  return withJson(withRedisOptions(program.command(verb)))
    .description(description)
    .argument("<run>", "the run id")
    .argument("<call>", "the tool call id (see `runs show RUN`)")
    .option("--reason <text>", "why, kept in the run's audit trail")
    .option("--by <name>", "who decides, kept in the audit trail", currentUser());
}

/** `approve RUN CALL [--input JSON --agents MODULE]`, `deny RUN CALL`, `respond RUN CALL --content TEXT [--error]`. */
export function registerDecisions(program: Command): void {
  decisionCommand(program, "approve", "approve a tool call a parked run waits on")
    .option("--input <json>", "approve an edited input instead (a JSON object; needs --agents)")
    .option("--agents <module>", "the agents module (as for `worker`): checks an --input edit")
    .action((runId: string, toolCallId: string, flags: DecisionFlags) =>
      decide("approve", runId, toolCallId, flags),
    );
  decisionCommand(program, "deny", "deny a tool call a parked run waits on").action(
    (runId: string, toolCallId: string, flags: DecisionFlags) =>
      decide("deny", runId, toolCallId, flags),
  );
  decisionCommand(program, "respond", "answer a waiting tool call in its tool's place")
    .requiredOption("--content <text>", "the call's result, as the model will read it")
    .option("--error", "tell the model the call failed")
    .action((runId: string, toolCallId: string, flags: RespondFlags) =>
      decide("respond", runId, toolCallId, flags),
    );
}
