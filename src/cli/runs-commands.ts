import { type Command, Option } from "commander";
import type { AgentRuntime } from "../runtime/agent-runtime.js";
import type { RunPage } from "../store/run-query.js";
import { isTerminal, RUN_RECORD_STATUSES, type RunRecordStatus } from "../store/schemas.js";
import { redactToolInputs } from "../tools/secret-inputs.js";
import { CommandFailed, positiveInteger, printJson, progress, withJson } from "./cli-support.js";
import { currentUser } from "./decision-commands.js";
import { type RedisFlags, withRedisOptions, withRedisRuntime } from "./redis-runtime.js";
import { runsTable, runTimeline } from "./run-format.js";

// `harnessx runs ls|show|cancel`: they read stored runs on a Redis runtime with no agents and no
// workers; the workers elsewhere act on them. Decisions are in decision-commands.ts.

interface JsonFlag {
  json?: boolean;
}

interface ListFlags extends RedisFlags, JsonFlag {
  status?: RunRecordStatus;
  agent?: string;
  session?: string;
  limit?: number;
  cursor?: string;
  all?: boolean;
}

/** A Redis command: its `--redis`, `--prefix` and `--json` options. */
const redisCommand = (parent: Command, name: string): Command =>
  withJson(withRedisOptions(parent.command(name)));

/** Every page from `first` on, reporting progress on stderr. */
async function allPages(
  runtime: AgentRuntime,
  query: Parameters<AgentRuntime["list"]>[0] & object,
): Promise<RunPage> {
  const runs: RunPage["runs"] = [];
  let cursor = query.cursor ?? null;
  let pages = 0;
  do {
    const page = await runtime.list({ ...query, cursor });
    runs.push(...page.runs);
    cursor = page.nextCursor;
    pages += 1;
    progress(`read page ${pages}: ${runs.length} run(s)${cursor === null ? "" : ", more to read"}`);
  } while (cursor !== null);
  return { runs, nextCursor: null };
}

async function listRuns(flags: ListFlags): Promise<void> {
  const query = {
    ...(flags.status === undefined ? {} : { status: flags.status }),
    ...(flags.agent === undefined ? {} : { agent: flags.agent }),
    ...(flags.session === undefined ? {} : { sessionId: flags.session }),
    ...(flags.limit === undefined ? {} : { limit: flags.limit }),
    ...(flags.cursor === undefined ? {} : { cursor: flags.cursor }),
  };
  const page = await withRedisRuntime(flags, "runs ls", (runtime) =>
    flags.all === true ? allPages(runtime, query) : runtime.list(query),
  );
  if (flags.json === true) return printJson(page);
  if (page.runs.length === 0) console.log("no runs");
  else for (const line of runsTable(page.runs)) console.log(line);
  if (page.nextCursor !== null) console.log(`more: harnessx runs ls --cursor ${page.nextCursor}`);
}

async function showRun(runId: string, flags: RedisFlags & JsonFlag): Promise<void> {
  const detail = await withRedisRuntime(flags, "runs show", (runtime) => runtime.get(runId));
  // Never shows an input a tool marks secret, nor one named like a secret.
  const run = redactToolInputs(detail, detail.secretInputs);
  if (flags.json === true) return printJson(run);
  for (const line of runTimeline(run)) console.log(line);
}

interface CancelFlags extends RedisFlags, JsonFlag {
  by: string;
}

async function cancelRun(runId: string, flags: CancelFlags): Promise<void> {
  const before = await withRedisRuntime(flags, "runs cancel", async (runtime) => {
    const { status } = await runtime.get(runId);
    if (isTerminal(status)) {
      throw new CommandFailed(
        "run_finished",
        `Run "${runId}" has finished (${status}): there is nothing to cancel.`,
      );
    }
    await runtime.cancel(runId, { by: flags.by });
    return status;
  });
  if (flags.json === true) {
    return printJson({ runId, cancelRequested: true, status: before, by: flags.by });
  }
  console.log(
    `cancel requested for run ${runId} (${before}) as "${flags.by}": a worker ends it as cancelled`,
  );
}

/** `runs ls`, `runs show RUN`, `runs cancel RUN`. */
export function registerRuns(program: Command): void {
  const runs = program
    .command("runs")
    .description("list, inspect and cancel the runs stored in a Redis runtime");

  redisCommand(runs, "ls")
    .description("one page of stored runs, newest first")
    .addOption(
      new Option("--status <status>", "only runs in this status").choices(RUN_RECORD_STATUSES),
    )
    .option("--agent <name>", "only runs of this agent")
    .option("--session <id>", "only runs of this session")
    .option("--limit <n>", "runs per page, at most 500 (default: 50)", positiveInteger)
    .option("--cursor <cursor>", "the page after this cursor (a previous page's nextCursor)")
    .option("--all", "every page, one after another (progress on stderr)")
    .action((flags: ListFlags) => listRuns(flags));

  redisCommand(runs, "show")
    .description("a run: its summary, pending calls, decisions and conversation")
    .argument("<run>", "the run id")
    .action((runId: string, flags: RedisFlags & JsonFlag) => showRun(runId, flags));

  redisCommand(runs, "cancel")
    .description("cancel a run that has not finished")
    .argument("<run>", "the run id")
    .option("--by <name>", "who cancels, kept with the run", currentUser())
    .action((runId: string, flags: CancelFlags) => cancelRun(runId, flags));
}
