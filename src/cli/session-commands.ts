import type { Command } from "commander";
import { printJson, withJson } from "./cli-support.js";
import { type RedisFlags, withRedisOptions, withRedisRuntime } from "./redis-runtime.js";

// `harnessx sessions delete ID`: erases a session from a Redis runtime (runtime.deleteSession).

interface DeleteFlags extends RedisFlags {
  json?: boolean;
}

async function deleteSession(sessionId: string, flags: DeleteFlags): Promise<void> {
  const deleted = await withRedisRuntime(flags, "sessions delete", (runtime) =>
    runtime.deleteSession(sessionId),
  );
  if (flags.json === true) return printJson({ sessionId, ...deleted });
  console.log(
    `deleted session ${sessionId}: ${deleted.runs} finished run(s), ${deleted.states} saved state value(s)`,
  );
}

/** `sessions delete ID`. */
export function registerSessions(program: Command): void {
  const sessions = program
    .command("sessions")
    .description("erase the data a session left in a Redis runtime");

  withJson(withRedisOptions(sessions.command("delete")))
    .description(
      "delete a session's finished runs and every value of extension state saved for it (runs still going are kept)",
    )
    .argument("<id>", "the session id")
    .action((sessionId: string, flags: DeleteFlags) => deleteSession(sessionId, flags));
}
